package blobrest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/server"
)

// getUserDelegationKey answers Get User Delegation Key on the Blob
// endpoint: a key for Blob user delegation SAS (sks "b"; see
// server.ServeUserDelegationKey).
func (s *Service) getUserDelegationKey(w http.ResponseWriter, r *req) error {
	return server.ServeUserDelegationKey(w, r.Request, "b")
}
