package blobrest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
)

// requestTier reads x-ms-access-tier on a request that writes or sets the
// tier of a blob of type typ: "" when absent.
func requestTier(h http.Header, typ string) (string, error) {
	return blob.CheckTier(h.Get("X-Ms-Access-Tier"), typ)
}

// setBlobTier is Set Blob Tier's REST handler.
func (s *Service) setBlobTier(w http.ResponseWriter, r *req) error {
	v := r.Header.Get("X-Ms-Access-Tier")
	if v == "" {
		return azerr.MissingHeader("x-ms-access-tier")
	}
	switch p := r.Header.Get("X-Ms-Rehydrate-Priority"); {
	case p == "", strings.EqualFold(p, "Standard"), strings.EqualFold(p, "High"):
	default:
		return azerr.InvalidHeader("x-ms-rehydrate-priority", p)
	}
	out, err := s.SetBlobTier(r.Context(), blob.SetBlobTierInput{Call: r.call(), Ref: r.ref(), LeaseID: r.Header.Get("X-Ms-Lease-Id"), Tier: v})
	if err != nil {
		return err
	}
	if out.Rehydrating {
		w.WriteHeader(http.StatusAccepted)
	} else {
		w.WriteHeader(http.StatusOK)
	}
	return nil
}
