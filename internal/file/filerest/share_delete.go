package filerest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// deleteShare is Delete Share, of the share or (with ?sharesnapshot=) of one
// snapshot. A leased share needs its lease ID (412 LeaseIdMissing (azfile
// lease tests TestShareDeleteShareWithoutLeaseId)). A share with snapshots
// needs x-ms-delete-snapshots: include (409 ShareHasSnapshots (azfile
// TestShareDeleteSnapshotsNoneWithSnapshots)); include refuses leased
// snapshots, include-leased deletes them too (Delete Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-share);
// the refusal is 412 LeaseIdMissing (inferred).
func (s *Service) deleteShare(r *req) (server.Response, error) {
	mode := strings.TrimSpace(wire.Field(r.Header, "X-Ms-Delete-Snapshots"))
	switch strings.ToLower(mode) {
	case "", "include", "include-leased":
		mode = strings.ToLower(mode)
	default:
		return server.Response{}, azerr.InvalidHeader("x-ms-delete-snapshots", mode)
	}
	if _, err := s.f.DeleteShare(r.Context(), file.DeleteShareInput{Ref: refOf(r), DeleteSnapshots: mode}); err != nil {
		return server.Response{}, err
	}
	return server.Bodiless(http.StatusAccepted), nil
}
