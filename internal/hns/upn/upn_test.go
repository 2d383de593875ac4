package upn

import (
	"context"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/kv/mem"
)

// counting counts the Update transactions and the Puts they make.
type counting struct {
	kv.Store
	updates, puts int
}

type countingTx struct {
	kv.Tx
	c *counting
}

func (t countingTx) Put(k, v []byte) error { t.c.puts++; return t.Tx.Put(k, v) }

func (c *counting) Update(ctx context.Context, fn func(kv.Tx) error) error {
	c.updates++
	return c.Store.Update(ctx, func(tx kv.Tx) error { return fn(countingTx{tx, c}) })
}

func name(t *testing.T, s kv.Store, id string) string {
	t.Helper()
	var got string
	if err := s.View(context.Background(), func(tx kv.Tx) (err error) {
		got, err = NewNames(tx).Of(id)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestLearnWritesOnlyNewOrChanged: a name is written when it is new or
// changed, not once per request; the memory is rechecked against the
// store after Recheck, which finds a name another front end changed;
// Names answers learned names and leaves every other id as it is.
func TestLearnWritesOnlyNewOrChanged(t *testing.T) {
	ctx := context.Background()
	base := mem.New()
	defer base.Close()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := &counting{Store: base}
	d := New(st, clk, 0)
	for range 100 {
		if err := d.Learn(ctx, "oid-1", "alice@contoso.com"); err != nil {
			t.Fatal(err)
		}
	}
	if st.updates != 1 || st.puts != 1 {
		t.Fatalf("100 requests of one user: %d transactions, %d writes", st.updates, st.puts)
	}
	if err := d.Learn(ctx, "oid-1", "alice.smith@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if st.puts != 2 || name(t, base, "oid-1") != "alice.smith@contoso.com" {
		t.Fatalf("a changed name: %d writes, stored %q", st.puts, name(t, base, "oid-1"))
	}
	// Another front end over the same store learns nothing new: it reads
	// the stored name once and writes nothing.
	st2 := &counting{Store: base}
	d2 := New(st2, clk, 0)
	if err := d2.Learn(ctx, "oid-1", "alice.smith@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if st2.updates != 1 || st2.puts != 0 {
		t.Fatalf("second front end: %d transactions, %d writes", st2.updates, st2.puts)
	}
	// It changes the name; the first front end's memory still trusts the
	// old one until Recheck, then reads the store and writes it back.
	if err := d2.Learn(ctx, "oid-1", "alice@fabrikam.com"); err != nil {
		t.Fatal(err)
	}
	if err := d.Learn(ctx, "oid-1", "alice.smith@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if got := name(t, base, "oid-1"); got != "alice@fabrikam.com" {
		t.Fatalf("before Recheck: %q", got)
	}
	clk.Advance(Recheck)
	if err := d.Learn(ctx, "oid-1", "alice.smith@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if got := name(t, base, "oid-1"); got != "alice.smith@contoso.com" {
		t.Fatalf("after Recheck: %q", got)
	}
	for _, id := range []string{"group-1", "$superuser", ""} {
		if got := name(t, base, id); got != id {
			t.Fatalf("%q named %q", id, got)
		}
	}
	// Nothing to learn without both claims.
	before := st.updates
	if err := d.Learn(ctx, "oid-2", ""); err != nil {
		t.Fatal(err)
	}
	if err := d.Learn(ctx, "", "bob@contoso.com"); err != nil {
		t.Fatal(err)
	}
	if st.updates != before {
		t.Fatalf("learned without an oid or a name")
	}
}

// TestLearnRecheckInterval: the interval given to New replaces Recheck:
// a directory trusts its memory for exactly that long (one transaction
// per interval for a known user), and 0 or less means Recheck.
func TestLearnRecheckInterval(t *testing.T) {
	ctx := context.Background()
	base := mem.New()
	defer base.Close()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := &counting{Store: base}
	d := New(st, clk, 2*time.Second)
	learn := func() {
		t.Helper()
		if err := d.Learn(ctx, "oid-1", "alice@contoso.com"); err != nil {
			t.Fatal(err)
		}
	}
	learn()
	clk.Advance(2*time.Second - time.Nanosecond)
	learn()
	if st.updates != 1 {
		t.Fatalf("within the interval: %d transactions", st.updates)
	}
	clk.Advance(time.Nanosecond)
	learn()
	if st.updates != 2 || st.puts != 1 {
		t.Fatalf("at the interval: %d transactions, %d writes", st.updates, st.puts)
	}
	for _, r := range []time.Duration{0, -time.Second} {
		if got := New(base, clk, r).recheck; got != Recheck {
			t.Fatalf("New(%v) rechecks after %v", r, got)
		}
	}
}

// BenchmarkLearnKnown is the cost a bearer request pays once its user is
// known: no transaction, no allocation.
func BenchmarkLearnKnown(b *testing.B) {
	s := mem.New()
	defer s.Close()
	d := New(s, clock.Real{}, 0)
	ctx := context.Background()
	if err := d.Learn(ctx, "oid-1", "alice@contoso.com"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := d.Learn(ctx, "oid-1", "alice@contoso.com"); err != nil {
			b.Fatal(err)
		}
	}
}
