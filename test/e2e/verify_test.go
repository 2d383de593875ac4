package e2e

import "github.com/cerulean-storage/cerulean/internal/blob"

// Every logged write of the end-to-end tests (change feed and events on)
// checks the change record it made from what it stored against the blob
// read back from the store.
func init() { blob.VerifyChangeRecords() }
