package svcprops

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// countingStore counts View transactions.
type countingStore struct {
	kv.Store
	views atomic.Int64
}

func (c *countingStore) View(ctx context.Context, fn func(tx kv.Tx) error) error {
	c.views.Add(1)
	return c.Store.View(ctx, fn)
}

const corsDoc = `<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://a.example</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`

// CORSRules reads the store once per CORSCacheTTL, sees a Set of this
// process at once, and a change written behind its back after the TTL.
func TestCORSRulesCache(t *testing.T) {
	ctx := context.Background()
	s := &countingStore{Store: mem.New()}
	defer s.Close()
	key := []byte("props/acct")
	rules := func() []CORSRule {
		t.Helper()
		r, err := CORSRules(ctx, s, key, Blob)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := rules(); len(r) != 0 {
		t.Fatalf("rules before any Set: %v", r)
	}
	if r := rules(); len(r) != 0 || s.views.Load() != 1 {
		t.Fatalf("second read: %v rules, %d views; want 0 rules from the cache (1 view)", len(r), s.views.Load())
	}
	in, err := Parse(strings.NewReader(corsDoc), Blob)
	if err != nil {
		t.Fatal(err)
	}
	if err := SetParsed(ctx, s, key, Blob, in); err != nil {
		t.Fatal(err)
	}
	if r := rules(); len(r) != 1 || r[0].AllowedOrigins != "http://a.example" {
		t.Fatalf("after Set: %+v", r)
	}
	// Written behind the cache's back (another front end): seen once the
	// TTL has passed.
	defer func(ttl time.Duration) { CORSCacheTTL = ttl }(CORSCacheTTL)
	CORSCacheTTL = time.Hour
	rules() // cached with a long life
	if err := s.Update(ctx, func(tx kv.Tx) error { return tx.Delete(key) }); err != nil {
		t.Fatal(err)
	}
	if r := rules(); len(r) != 1 {
		t.Fatalf("within the TTL: %d rules, want the cached 1", len(r))
	}
	CORSCacheTTL = 0
	if r := rules(); len(r) != 0 {
		t.Fatalf("after the TTL: %d rules, want 0", len(r))
	}
}
