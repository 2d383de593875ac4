package blobrest

import (
	"net/http"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/blob"
)

// feedReadOnly refuses every request to the change feed container
// ($blobchangefeed) but reads (GET and HEAD): the feed is read-only for
// users, as on Azure, whose answer to a delete there is 403 "The account
// being accessed does not have sufficient permissions to execute this
// operation" (InsufficientAccountPermissions).
func feedReadOnly(r *req) error {
	if r.container != blob.ChangeFeedContainer || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return nil
	}
	return azerr.New(azerr.InsufficientAccountPermissions)
}
