package queue

import (
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the queue's ACL, read now.
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := r.route.Rule()
	_, err := r.AuthorizeSAS(server.SASTarget{Container: r.queue}, s.policies(r), rule, ok)
	return err
}

// policies resolves signed identifiers in the ACL of the request's queue.
func (s *Service) policies(r *req) auth.PolicyLookup {
	return server.Policies(func() ([]policy.Stored, error) {
		var acl []policy.Stored
		err := s.store.View(r.Context(), func(tx kv.Tx) error {
			q, err := loadQueue(tx, r.Account, r.queue)
			if err == nil {
				acl = q.ACL
			}
			return err
		})
		return acl, err
	})
}
