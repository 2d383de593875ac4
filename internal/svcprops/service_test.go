package svcprops

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// TestServiceByKind: one Service serves every kind, and the kind decides
// what it keeps (Parse drops another service's elements, Default gives
// the kind's own) and whether Get Service Stats exists; accounts and
// kinds are kept apart by the key function.
func TestServiceByKind(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	defer store.Close()
	svc := map[Kind]*Service{}
	for _, k := range []Kind{Blob, Queue, Table, File} {
		k := k
		svc[k] = New(k, store, func(acct string) []byte { return kv.Key("sp-test", acct, k.String()) })
	}
	doc := `<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>` +
		`<DeleteRetentionPolicy><Enabled>true</Enabled><Days>2</Days></DeleteRetentionPolicy>` +
		`<ShareDeleteRetentionPolicy><Enabled>true</Enabled><Days>4</Days></ShareDeleteRetentionPolicy></StorageServiceProperties>`
	for k, s := range svc {
		in, err := Parse(strings.NewReader(doc), s.Kind())
		if err != nil {
			t.Fatalf("%v: parse: %v", k, err)
		}
		if _, err := s.SetProperties(ctx, SetPropertiesInput{Account: "a", Properties: in}); err != nil {
			t.Fatalf("%v: set: %v", k, err)
		}
	}
	for k, s := range svc {
		out, err := s.GetProperties(ctx, GetPropertiesInput{Account: "a"})
		if err != nil {
			t.Fatal(err)
		}
		p := out.Properties
		if got, want := p.Logging != nil && p.Logging.Delete, k != File; got != want {
			t.Errorf("%v: Logging.Delete set = %v, want %v", k, got, want)
		}
		if got, want := p.DeleteRetentionPolicy != nil && p.DeleteRetentionPolicy.Enabled, k == Blob; got != want {
			t.Errorf("%v: DeleteRetentionPolicy enabled = %v, want %v", k, got, want)
		}
		if got, want := p.ShareDeleteRetentionPolicy != nil && p.ShareDeleteRetentionPolicy.Enabled, k == File; got != want {
			t.Errorf("%v: ShareDeleteRetentionPolicy enabled = %v, want %v", k, got, want)
		}
		// Another account has the kind's defaults.
		other, err := s.GetProperties(ctx, GetPropertiesInput{Account: "b"})
		if err != nil {
			t.Fatal(err)
		}
		if other.Properties.Logging != nil && other.Properties.Logging.Delete {
			t.Errorf("%v: account b sees account a's properties", k)
		}
		var fromTx Properties
		if err := store.View(ctx, func(tx kv.Tx) error { fromTx, err = s.Load(tx, "a"); return err }); err != nil {
			t.Fatal(err)
		}
		if (fromTx.DeleteRetentionPolicy != nil) != (p.DeleteRetentionPolicy != nil) {
			t.Errorf("%v: Load and GetProperties disagree", k)
		}
	}
	now := time.Date(2026, 3, 1, 12, 4, 5, 0, time.UTC)
	for k, s := range svc {
		out, err := s.GetStats(ctx, GetStatsInput{Account: "a", Now: now})
		if k.HasStats() != (k != File) {
			t.Errorf("%v: HasStats = %v", k, k.HasStats())
		}
		if !k.HasStats() {
			if e, ok := azerr.As(err); !ok || e.Code != azerr.InvalidQueryParameterValue || e.Status != 400 {
				t.Errorf("%v: stats of a kind without them: %v", k, err)
			}
			continue
		}
		if err != nil || out.Stats != LiveStats(now) {
			t.Errorf("%v: stats %+v, %v", k, out.Stats, err)
		}
	}
}

// TestServiceCORSRules: the rules Set stores are the ones CORSRules
// answers, at once (Set drops the cached copy).
func TestServiceCORSRules(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	defer store.Close()
	s := New(Queue, store, func(acct string) []byte { return kv.Key("sp-test", acct) })
	if rules, err := s.CORSRules(ctx, "a"); err != nil || len(rules) != 0 {
		t.Fatalf("rules before Set: %v, %v", rules, err)
	}
	in, err := Parse(strings.NewReader(`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://o</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>3</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`), Queue)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetProperties(ctx, SetPropertiesInput{Account: "a", Properties: in}); err != nil {
		t.Fatal(err)
	}
	rules, err := s.CORSRules(ctx, "a")
	if err != nil || len(rules) != 1 || rules[0].AllowedOrigins != "http://o" || rules[0].MaxAgeInSeconds != 3 {
		t.Fatalf("rules after Set: %+v, %v", rules, err)
	}
}
