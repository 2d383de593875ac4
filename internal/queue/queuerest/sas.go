package queuerest

import (
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/queue"
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
		out, err := s.q.GetQueueACL(r.Context(), queue.GetQueueACLInput{QueueID: r.id()})
		return out.Policies, err
	})
}

// getUserDelegationKey answers Get User Delegation Key on the Queue
// endpoint: a key for Queue user delegation SAS (sks "q"; see
// server.UserDelegationKey; azure-storage-queue 12.15.0b1
// QueueServiceClient.get_user_delegation_key, from 2026-02-06).
func (s *Service) getUserDelegationKey(r *req) (server.Response, error) {
	return server.UserDelegationKey(r.Request, "q")
}
