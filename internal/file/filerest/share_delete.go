package filerest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/file"
)

// deleteShare is Delete Share, of the share or (with ?sharesnapshot=) of one
// snapshot. A leased share needs its lease ID (412 LeaseIdMissing (azfile
// lease tests TestShareDeleteShareWithoutLeaseId)). A share with snapshots
// needs x-ms-delete-snapshots: include (409 ShareHasSnapshots (azfile
// TestShareDeleteSnapshotsNoneWithSnapshots)); include refuses leased
// snapshots, include-leased deletes them too (Delete Share,
// https://learn.microsoft.com/en-us/rest/api/storageservices/delete-share);
// the refusal is 412 LeaseIdMissing (inferred).
func (s *Service) deleteShare(w http.ResponseWriter, r *req) error {
	mode := strings.TrimSpace(r.Header.Get("X-Ms-Delete-Snapshots"))
	switch strings.ToLower(mode) {
	case "", "include", "include-leased":
		mode = strings.ToLower(mode)
	default:
		return azerr.InvalidHeader("x-ms-delete-snapshots", mode)
	}
	if _, err := s.f.DeleteShare(r.Context(), file.DeleteShareInput{Ref: refOf(r), DeleteSnapshots: mode}); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
