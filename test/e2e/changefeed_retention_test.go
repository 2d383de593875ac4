package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestChangeFeedRetention: with --blob-change-feed-retention 1 the
// collector removes the hours of the log that ended more than a day ago
// (on the injected clock), and the feed, found and read as the change
// feed client libraries read it, starts after them; records within the
// day stay, and the hour holding the newest record stays however old.
func TestChangeFeedRetention(t *testing.T) {
	a, clk := startAppWith(t, func(c *app.Config) { c.ChangeFeed, c.ChangeFeedRetention = true, 24*time.Hour })
	cred, err := azblob.NewSharedKeyCredential(app.DevAccount, app.DevKey)
	must(t, err)
	opts := clientOptions()
	opts.PerCallPolicies = append(opts.PerCallPolicies, sdDatePolicy{clk})
	c, err := azblob.NewClientWithSharedKeyCredential(a.BlobURL, cred, opts)
	must(t, err)
	e := &env{t: t, app: a, clock: clk, c: c, ctx: context.Background()}
	_, err = c.CreateContainer(e.ctx, "keep", nil)
	must(t, err)
	put := func(name string) {
		t.Helper()
		_, err := c.UploadBuffer(e.ctx, "keep", name, []byte(name), nil)
		must(t, err)
	}
	subjects := func() string {
		t.Helper()
		var out []any
		for _, ev := range e.readFeed() {
			out = append(out, ev["subject"])
		}
		return fmt.Sprint(out)
	}
	collect := func() {
		t.Helper()
		if _, err := a.Blob.CollectGarbage(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	const p = "/blobServices/default/containers/keep/blobs/"
	put("old")
	clk.Advance(2 * time.Hour)
	put("mid")
	collect()
	if got, want := subjects(), fmt.Sprint([]any{p + "old", p + "mid"}); got != want {
		t.Fatalf("within the day: %s, want %s", got, want)
	}
	// 25 hours after "old": its hour ended more than a day ago.
	clk.Advance(23 * time.Hour)
	put("new")
	collect()
	if got, want := subjects(), fmt.Sprint([]any{p + "mid", p + "new"}); got != want {
		t.Fatalf("after a day: %s, want %s", got, want)
	}
	// Ten days on, with no write since: the newest hour stays.
	clk.Advance(10 * 24 * time.Hour)
	collect()
	if got, want := subjects(), fmt.Sprint([]any{p + "new"}); got != want {
		t.Fatalf("ten days on: %s, want %s", got, want)
	}
	put("later")
	if got, want := subjects(), fmt.Sprint([]any{p + "new", p + "later"}); got != want {
		t.Fatalf("a write after the trim: %s, want %s", got, want)
	}
}
