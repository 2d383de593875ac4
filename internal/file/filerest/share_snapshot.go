package filerest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/file"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// snapshotShare is Create Share Snapshot (PUT ?restype=share&comp=snapshot;
// SnapshotShare). Without x-ms-meta-* headers the snapshot gets the
// share's metadata, with them only theirs.
func (s *Service) snapshotShare(w http.ResponseWriter, r *req) error {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return err
	}
	out, err := s.f.SnapshotShare(r.Context(), file.SnapshotShareInput{Ref: refOf(r), Meta: meta})
	if err != nil {
		return err
	}
	setShareETag(w, out.Share)
	w.Header().Set("X-Ms-Snapshot", out.Snapshot)
	w.WriteHeader(http.StatusCreated)
	return nil
}
