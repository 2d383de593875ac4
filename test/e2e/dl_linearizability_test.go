package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
	"github.com/anishathalye/porcupine"
)

// The directory model: one directory of files lives at "a" or at "b".
// A rename from where it is moves it; a rename from where it is not is
// 404 SourcePathNotFound; a listing sees it, whole, at one place.

type dirOp struct {
	rename   bool
	from, to string
}

type dirOut struct {
	ok  bool   // rename: applied (false: 404 SourcePathNotFound)
	loc string // list: where the listing saw the directory
}

var dirModel = porcupine.Model{
	Init: func() any { return "a" },
	Step: func(state, input, output any) (bool, any) {
		s, in, out := state.(string), input.(dirOp), output.(dirOut)
		if !in.rename {
			return out.loc == s, s
		}
		if out.ok {
			return s == in.from, in.to
		}
		return s != in.from, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(dirOp), output.(dirOut)
		if !in.rename {
			return "list → " + out.loc
		}
		return fmt.Sprintf("rename %s→%s → %v", in.from, in.to, out.ok)
	},
}

// TestDLRenameLinearizable: renamers moving one directory between two
// names and listers looking for it, all through the SDK at once: the
// history is linearizable against the directory model (porcupine).
func TestDLRenameLinearizable(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("lin")
	_, err := fs.NewDirectoryClient("a").Create(e.ctx, nil)
	must(t, err)
	const files = 30
	for i := range files {
		_, err := fs.NewFileClient(fmt.Sprintf("a/f%02d", i)).Create(e.ctx, nil)
		must(t, err)
	}
	start := time.Now()
	var mu sync.Mutex
	var history []porcupine.Operation
	record := func(client int, in dirOp, call time.Time, out dirOut) {
		mu.Lock()
		history = append(history, porcupine.Operation{ClientId: client, Input: in, Output: out,
			Call: call.Sub(start).Nanoseconds(), Return: time.Since(start).Nanoseconds()})
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				from, to := "a", "b"
				if (c+i)%2 == 1 {
					from, to = "b", "a"
				}
				call := time.Now()
				_, err := fs.NewDirectoryClient(from).Rename(e.ctx, to, nil)
				switch code := errCode(err); code {
				case "":
					record(c, dirOp{rename: true, from: from, to: to}, call, dirOut{ok: true})
				case "404 SourcePathNotFound":
					record(c, dirOp{rename: true, from: from, to: to}, call, dirOut{})
				default:
					t.Errorf("rename %s→%s: %s", from, to, code)
					return
				}
			}
		}()
	}
	for c := 4; c < 6; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 40 {
				call := time.Now()
				page, err := fs.NewListPathsPager(true, &filesystem.ListPathsOptions{}).NextPage(e.ctx)
				if err != nil {
					t.Error(err)
					return
				}
				tops := map[string]int{}
				for _, p := range page.Paths {
					top, _, _ := strings.Cut(*p.Name, "/")
					tops[top]++
				}
				loc := fmt.Sprint(tops)
				if len(tops) == 1 {
					for k, n := range tops {
						if n == files+1 {
							loc = k
						}
					}
				}
				record(c, dirOp{}, call, dirOut{loc: loc})
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if res, _ := porcupine.CheckOperationsVerbose(dirModel, history, 30*time.Second); res != porcupine.Ok {
		t.Fatalf("history of %d operations is not linearizable (%v)", len(history), res)
	}
	t.Logf("%d operations linearizable", len(history))
}
