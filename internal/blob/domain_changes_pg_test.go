package blob

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/chunk"
	"github.com/cerulean-storage/cerulean/internal/clock"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres"
	"github.com/cerulean-storage/cerulean/internal/kv/postgres/pgtest"
	"github.com/cerulean-storage/cerulean/internal/testenv"
)

// feedServices returns n Blob services with the change feed on: on
// PostgreSQL (when $CERULEAN_TEST_POSTGRES is set) each over its own
// store handle on one schema, as n front ends are; otherwise n services
// over the one store of testenv.Stores.
func feedServices(t testing.TB, n int) []*Service {
	t.Helper()
	out := make([]*Service, n)
	if os.Getenv(pgtest.EnvVar) == "" {
		store, chunks, _ := testenv.Stores(t)
		for i := range out {
			out[i] = New(store, chunks, clock.Real{}, nil)
		}
	} else {
		dsn, _ := pgtest.Schema(t)
		chunks, err := chunk.NewFS(filepath.Join(t.TempDir(), "chunks"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range out {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			db, err := postgres.Open(ctx, dsn, postgres.Options{MaxConns: 4, MaxAttempts: 1000})
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			out[i] = New(db, chunks, clock.Real{}, nil)
		}
	}
	for _, s := range out {
		s.SetChangeFeed(func(string) bool { return true })
	}
	return out
}

// TestChangeFeedConcurrentWriters has writers on several front ends (on
// PostgreSQL; goroutines of one process on the other stores) put,
// overwrite and delete blobs of one account at once, some writes refused
// by a condition. It proves what the feed promises: every acknowledged
// write has exactly one record, with the ETag the write answered; no
// refused write has one; and each writer's writes, acknowledged one
// after the other, are in the log in that order.
func TestChangeFeedConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	svcs := feedServices(t, 3)
	c := ContainerRef{Account: "acct", Container: "cnt"}
	if _, err := svcs[0].CreateContainer(ctx, CreateContainerInput{Ref: c}); err != nil {
		t.Fatal(err)
	}
	const writers, each = 6, 12
	type ack struct{ api, etag string }
	acks := make([][]ack, writers)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := svcs[w%len(svcs)]
			for i := 0; i < each; i++ {
				ref := blobAt(c, fmt.Sprintf("w%d/%d", w, i%3)) // names reused: overwrites
				switch i % 4 {
				case 0, 1:
					out, err := s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: BlockBlob, Body: strings.NewReader("x"), Length: 1})
					if err != nil {
						errs <- err
						return
					}
					acks[w] = append(acks[w], ack{"PutBlob", strings.Trim(out.ETag, `"`)})
				case 2: // refused: If-Match an ETag no blob has
					_, err := s.PutBlob(ctx, PutBlobInput{Ref: ref, Type: BlockBlob, Body: strings.NewReader("no"), Length: 2,
						Access: Access{Cond: cond.Conditions{IfMatch: []string{`"0x1"`}}}})
					if err == nil {
						errs <- fmt.Errorf("writer %d: a put If-Match another ETag succeeded", w)
						return
					}
				case 3:
					if _, err := s.DeleteBlob(ctx, DeleteBlobInput{Ref: ref}); err == nil {
						acks[w] = append(acks[w], ack{"DeleteBlob", ""})
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := changes(t, svcs[1], "acct")
	total := 0
	for _, a := range acks {
		total += len(a)
	}
	if len(got) != total {
		t.Fatalf("%d records, %d acknowledged writes", len(got), total)
	}
	next := make([]int, writers)
	for i, r := range got {
		if r.Seq != uint64(i+1) {
			t.Fatalf("record %d has seq %d", i, r.Seq)
		}
		var w, n int
		if _, err := fmt.Sscanf(strings.TrimPrefix(r.Subject, changelog.Subject("cnt", "")), "w%d/%d", &w, &n); err != nil {
			t.Fatalf("subject %s: %v", r.Subject, err)
		}
		if next[w] >= len(acks[w]) {
			t.Fatalf("writer %d: more records than acknowledged writes", w)
		}
		a := acks[w][next[w]]
		next[w]++
		if r.Data.API != a.api || (a.etag != "" && r.Data.ETag != a.etag) {
			t.Fatalf("writer %d's write %d: record %s %s, acknowledged %s %s", w, next[w]-1, r.Data.API, r.Data.ETag, a.api, a.etag)
		}
	}
}
