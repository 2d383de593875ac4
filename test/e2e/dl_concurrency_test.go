package e2e

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
)

// errCode is the Azure error code of err ("" for success, the error text
// for anything else).
func errCode(err error) string {
	if err == nil {
		return ""
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return fmt.Sprintf("%d %s", re.StatusCode, re.ErrorCode)
	}
	return err.Error()
}

// TestDLRenameRace: clients renaming one directory to different places
// at once: exactly one wins, every other gets 404 SourcePathNotFound, and
// the tree holds the directory, whole, at the winner's destination.
func TestDLRenameRace(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("race")
	_, err := fs.NewDirectoryClient("src").Create(e.ctx, nil)
	must(t, err)
	for i := range 10 {
		_, err := fs.NewFileClient(fmt.Sprintf("src/f%d", i)).Create(e.ctx, nil)
		must(t, err)
	}
	const n = 8
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := fs.NewDirectoryClient("src").Rename(e.ctx, fmt.Sprintf("dst%d", i), nil)
			codes[i] = errCode(err)
		}()
	}
	wg.Wait()
	winner := -1
	for i, c := range codes {
		switch c {
		case "":
			if winner >= 0 {
				t.Fatalf("two winners: %d and %d", winner, i)
			}
			winner = i
		case "404 SourcePathNotFound":
		default:
			t.Fatalf("rename %d: %s", i, c)
		}
	}
	if winner < 0 {
		t.Fatalf("no winner: %v", codes)
	}
	got := listAll(t, e, fs, "", true, 5000)
	want := []string{fmt.Sprintf("dst%d/", winner)}
	for i := range 10 {
		want = append(want, fmt.Sprintf("dst%d/f%d", winner, i))
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after the race: %v", got)
	}
}

// TestDLCreateRace: creates with If-None-Match: * racing for one name:
// exactly one succeeds, the others get 409 PathAlreadyExists.
func TestDLCreateRace(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("crace")
	const n = 8
	codes := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := fs.NewFileClient("one").Create(e.ctx, &file.CreateOptions{Owner: to.Ptr(fmt.Sprint("w", i)),
				AccessConditions: &file.AccessConditions{ModifiedAccessConditions: &file.ModifiedAccessConditions{IfNoneMatch: to.Ptr(azcore.ETagAny)}}})
			codes[i] = errCode(err)
		}()
	}
	wg.Wait()
	won := 0
	for i, c := range codes {
		switch c {
		case "":
			won++
		case "409 PathAlreadyExists":
		default:
			t.Fatalf("create %d: %s", i, c)
		}
	}
	if won != 1 {
		t.Fatalf("%d creates won: %v", won, codes)
	}
}

// TestDLListDuringRename: recursive listings while a directory of 200
// files is renamed back and forth see it whole under one name or the
// other, never split or half there.
func TestDLListDuringRename(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("listmv")
	_, err := fs.NewDirectoryClient("a").Create(e.ctx, nil)
	must(t, err)
	const files = 200
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, err := fs.NewFileClient(fmt.Sprintf("a/f%03d", i)).Create(e.ctx, nil)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	var stop atomic.Bool
	var renames atomic.Int64
	done := make(chan error, 1)
	go func() {
		names := [2]string{"a", "b"}
		for i := 0; !stop.Load() && i < 400; i++ {
			if _, err := fs.NewDirectoryClient(names[i%2]).Rename(e.ctx, names[(i+1)%2], nil); err != nil {
				done <- err
				return
			}
			renames.Add(1)
		}
		done <- nil
	}()
	var listers sync.WaitGroup
	var lists atomic.Int64
	for range 3 {
		listers.Add(1)
		go func() {
			defer listers.Done()
			for i := 0; i < 30; i++ {
				page, err := fs.NewListPathsPager(true, &filesystem.ListPathsOptions{}).NextPage(e.ctx)
				if err != nil {
					t.Error(err)
					return
				}
				under := map[string]int{}
				for _, p := range page.Paths {
					top, _, _ := strings.Cut(*p.Name, "/")
					under[top]++
				}
				if len(under) != 1 || (under["a"] != files+1 && under["b"] != files+1) {
					t.Errorf("a listing saw %v", under)
					return
				}
				lists.Add(1)
			}
		}()
	}
	listers.Wait()
	stop.Store(true)
	must(t, <-done)
	t.Logf("%d listings during %d renames", lists.Load(), renames.Load())
}
