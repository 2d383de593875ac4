package filerest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// snapshotShare is Create Share Snapshot (PUT ?restype=share&comp=snapshot;
// SnapshotShare). Without x-ms-meta-* headers the snapshot gets the
// share's metadata, with them only theirs.
func (s *Service) snapshotShare(r *req) (server.Response, error) {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return server.Response{}, err
	}
	out, err := s.f.SnapshotShare(r.Context(), file.SnapshotShareInput{Ref: refOf(r), Meta: meta})
	if err != nil {
		return server.Response{}, err
	}
	resp := server.Bodiless(http.StatusCreated)
	setShareETag(&resp, out.Share)
	resp.Set("X-Ms-Snapshot", out.Snapshot)
	return resp, nil
}
