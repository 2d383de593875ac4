package blob

import "github.com/cerulean-storage/cerulean/internal/kv"

// ContainerHook is told of every container created or deleted, inside
// the transaction that creates or deletes it, so that what another front
// end keeps per container commits or fails with the container: the dfs
// front end creates the root directory of a hierarchical account's
// filesystem with its container, and detaches the tree with it.
type ContainerHook interface {
	ContainerCreated(tx kv.Tx, account, container string) error
	ContainerDeleted(tx kv.Tx, account, container string) error
}

// SetContainerHook installs h. Call it before the service answers
// requests.
func (s *Service) SetContainerHook(h ContainerHook) { s.hook = h }
