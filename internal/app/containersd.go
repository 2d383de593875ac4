package app

import "fmt"

// checkContainerSoftDelete refuses --container-soft-delete with a
// hierarchical account: Cerulean keeps deleted containers of flat
// accounts only (a hierarchical account's container is a filesystem of
// the namespace, whose records name it; internal/blob/domain_containersd.go).
func (c Config) checkContainerSoftDelete() error {
	if c.ContainerSoftDelete < 0 || c.ContainerSoftDelete > 365 {
		return fmt.Errorf("container soft delete of %d days: want 0 (off) to 365", c.ContainerSoftDelete)
	}
	if c.ContainerSoftDelete == 0 {
		return nil
	}
	hier := c.hierarchical()
	names := []string{DevAccount}
	if len(c.Accounts) > 0 {
		names = names[:0]
		for _, a := range c.Accounts {
			names = append(names, a.Name)
		}
	}
	for _, n := range names {
		if hier(n) {
			return fmt.Errorf("account %s: container soft delete is not supported on an account with a hierarchical namespace; serve it without --container-soft-delete, or without a hierarchical namespace", n)
		}
	}
	return nil
}
