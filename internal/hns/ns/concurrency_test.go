package ns

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// TestRenameRaceOneWinner races renames of different sources to one
// destination with If-None-Match: *: exactly one wins, the others see
// PathAlreadyExists, and the loser's source is intact.
func TestRenameRaceOneWinner(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const racers = 8
		for round := 0; round < 5; round++ {
			dst := fmt.Sprintf("dst%d", round)
			for i := 0; i < racers; i++ {
				e.mkfile(fmt.Sprintf("r%d/src%d", round, i), fmt.Sprint(i))
			}
			var wins atomic.Int32
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, racers)
			for i := 0; i < racers; i++ {
				wg.Go(func() {
					<-start
					errs[i] = e.store.Update(context.Background(), func(tx kv.Tx) error {
						_, err := e.ns.Rename(tx, e.fs, RenameInput{
							Source: fmt.Sprintf("r%d/src%d", round, i), Dest: dst,
							Cond: cond.Conditions{IfNoneMatch: []string{"*"}},
						})
						return err
					})
					if errs[i] == nil {
						wins.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("round %d: %d winners (%v)", round, wins.Load(), errs)
			}
			for i, err := range errs {
				src := fmt.Sprintf("r%d/src%d", round, i)
				if err == nil {
					if e.exists(src) {
						t.Fatalf("winner's source %s still there", src)
					}
					continue
				}
				wantCode(t, err, "PathAlreadyExists")
				if !e.exists(src) {
					t.Fatalf("loser's source %s lost", src)
				}
			}
		}
	})
}

// TestListerDuringDirectoryRename lists the tree while a directory of 500
// files is renamed back and forth: every listing holds the 500 files under
// exactly one of the two names, never some under each.
func TestListerDuringDirectoryRename(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const files = 500
		e.update(func(tx kv.Tx) error {
			for i := 0; i < files; i++ {
				if _, err := e.ns.Create(tx, e.fs, CreateInput{Path: fmt.Sprintf("x/big/f%04d", i), MakeParents: true}); err != nil {
					return err
				}
			}
			_, err := e.ns.Create(tx, e.fs, CreateInput{Path: "y", Dir: true})
			return err
		})
		ctx, cancel := context.WithCancel(context.Background())
		var renamer, listers sync.WaitGroup
		var renames atomic.Int32
		renamer.Go(func() {
			names := []string{"x/big", "y/moved"}
			for i := 0; ctx.Err() == nil; i++ {
				err := e.store.Update(ctx, func(tx kv.Tx) error {
					_, err := e.ns.Rename(tx, e.fs, RenameInput{Source: names[i%2], Dest: names[(i+1)%2]})
					return err
				})
				if err != nil {
					if ctx.Err() == nil {
						t.Error(err)
					}
					return
				}
				renames.Add(1)
			}
		})
		var listings atomic.Int32
		for l := 0; l < 2; l++ {
			listers.Go(func() {
				// Keep listing until the directory has moved a few times.
				for i := 0; i < 20 || renames.Load() < 3 && i < 2000; i++ {
					var page *ListOutput
					err := e.store.View(ctx, func(tx kv.Tx) error {
						var err error
						page, err = e.ns.List(tx, e.fs, ListInput{Recursive: true})
						return err
					})
					if err != nil {
						t.Error(err)
						return
					}
					listings.Add(1)
					var underX, underY int
					for _, p := range page.Paths {
						switch {
						case strings.HasPrefix(p.Path, "x/big/"):
							underX++
						case strings.HasPrefix(p.Path, "y/moved/"):
							underY++
						}
					}
					if !(underX == files && underY == 0 || underX == 0 && underY == files) {
						t.Errorf("listing saw %d under x/big and %d under y/moved", underX, underY)
						return
					}
				}
			})
		}
		listers.Wait()
		cancel()
		renamer.Wait()
		if renames.Load() < 3 {
			t.Fatalf("only %d renames ran during %d listings", renames.Load(), listings.Load())
		}
		t.Logf("%d listings during %d renames", listings.Load(), renames.Load())
	})
}
