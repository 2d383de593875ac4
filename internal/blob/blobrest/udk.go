package blobrest

import "github.com/cerulean-storage/cerulean/internal/server"

// getUserDelegationKey answers Get User Delegation Key on the Blob
// endpoint: a key for Blob user delegation SAS (sks "b"; see
// server.UserDelegationKey).
func (s *Service) getUserDelegationKey(r *req) (server.Response, error) {
	return server.UserDelegationKey(r.Request, "b")
}
