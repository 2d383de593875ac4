package blob

import (
	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// loadContainer reads a container record or returns 404 ContainerNotFound.
func loadContainer(tx kv.Tx, acct, name string) (*container, error) {
	var c container
	ok, err := kv.GetJSON(tx, ContainerKey(acct, name), &c)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, azerr.New(azerr.ContainerNotFound)
	}
	return &c, nil
}
