package queue

import (
	"github.com/cerulean-storage/cerulean/internal/auth"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// as records the routed operation's name (the key of sasRules).
func (r *req) as(name string, o op) (op, error) {
	r.opName = name
	r.Op = name
	return o, nil
}

// sasRules is what each Queue operation needs from a SAS (Create an
// account SAS, "Permissions by operation",
// https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas;
// Create a service SAS). An account SAS creates queues with c or w
// (srt=c) and reads and writes the service properties and stats with r
// and w (srt=s). Operations not listed (queue ACL) are Shared Key only.
var sasRules = map[string]server.SASRule{
	"getQueueServiceProperties": {Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true},
	"setQueueServiceProperties": {Resource: auth.ServiceLevel, AnyOf: "w", AccountOnly: true},
	"getQueueServiceStats":      {Resource: auth.ServiceLevel, AnyOf: "r", AccountOnly: true},

	"listQueues":       {Resource: auth.ServiceLevel, AnyOf: "l"},
	"createQueue":      {Resource: auth.ContainerLevel, AnyOf: "cw", AccountOnly: true},
	"deleteQueue":      {Resource: auth.ContainerLevel, AnyOf: "d", AccountOnly: true},
	"getQueueMetadata": {Resource: auth.ContainerLevel, AnyOf: "r"},
	"setQueueMetadata": {Resource: auth.ContainerLevel, AnyOf: "w"},
	"putMessage":       {Resource: auth.ObjectLevel, AnyOf: "a"},
	"peekMessages":     {Resource: auth.ObjectLevel, AnyOf: "r"},
	"getMessages":      {Resource: auth.ObjectLevel, AnyOf: "p"},
	"deleteMessage":    {Resource: auth.ObjectLevel, AnyOf: "p"},
	"updateMessage":    {Resource: auth.ObjectLevel, AnyOf: "u"},
	"clearMessages":    {Resource: auth.ObjectLevel, AnyOf: "d"},
}

// authorizeSAS verifies the request's SAS for the routed operation; the
// stored access policies come from the queue's ACL, read now.
func (s *Service) authorizeSAS(r *req) error {
	rule, ok := sasRules[r.opName]
	_, err := r.AuthorizeSAS(server.SASTarget{Container: r.queue}, s.policies(r), rule, ok)
	return err
}

// policies resolves signed identifiers in the ACL of the request's queue.
func (s *Service) policies(r *req) auth.PolicyLookup {
	return server.Policies(func() ([]server.StoredPolicy, error) {
		var acl []server.StoredPolicy
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
