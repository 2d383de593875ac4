package blobrest

import (
	"net/http"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// requestTier reads x-ms-access-tier on a request that writes or sets the
// tier of a blob of type typ: "" when absent.
func requestTier(h http.Header, typ string) (string, error) {
	return blob.CheckTier(h.Get("X-Ms-Access-Tier"), typ)
}

// setBlobTier is Set Blob Tier's REST handler.
func (s *Service) setBlobTier(r *req) (server.Response, error) {
	v := wire.Field(r.Header, "X-Ms-Access-Tier")
	if v == "" {
		return server.Response{}, azerr.MissingHeader("x-ms-access-tier")
	}
	switch p := wire.Field(r.Header, "X-Ms-Rehydrate-Priority"); {
	case p == "", strings.EqualFold(p, "Standard"), strings.EqualFold(p, "High"):
	default:
		return server.Response{}, azerr.InvalidHeader("x-ms-rehydrate-priority", p)
	}
	out, err := s.SetBlobTier(r.Context(), blob.SetBlobTierInput{Call: r.call(), Ref: r.ref(), LeaseID: wire.Field(r.Header, "X-Ms-Lease-Id"), Tier: v})
	if err != nil {
		return server.Response{}, err
	}
	if out.Rehydrating {
		return server.Bodiless(http.StatusAccepted), nil
	}
	return server.Bodiless(http.StatusOK), nil
}
