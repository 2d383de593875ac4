package app

import "fmt"

// checkContainerSoftDelete refuses a --container-soft-delete outside 0
// (off) to 365 days, the range Azure's container delete retention takes
// (the management plane's DeleteRetentionPolicy, which the account's
// containerDeleteRetentionPolicy is: "The minimum specified value can be
// 1 and the maximum value can be 365", learn.microsoft.com
// javascript/api/@azure/arm-storage/deleteretentionpolicy). Flat and
// hierarchical accounts alike keep deleted containers
// (internal/blob/domain_containersd.go).
func (c Config) checkContainerSoftDelete() error {
	if c.ContainerSoftDelete < 0 || c.ContainerSoftDelete > 365 {
		return fmt.Errorf("container soft delete of %d days: want 0 (off) to 365", c.ContainerSoftDelete)
	}
	return nil
}
