package multiproc

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
)

// dlLayout is three processes serving the dfs endpoint of a hierarchical
// dev account.
func dlLayout() layout {
	var l layout
	for i := range l.services {
		l.services[i] = []service{dfsSvc}
	}
	l.env = []string{"CERULEAN_HIERARCHICAL_NAMESPACE=true"}
	return l
}

// TestDLRenameRaceAcrossProcesses: clients of three processes rename one
// directory to different places at once: exactly one rename wins, every
// other is 404 SourcePathNotFound, and every process then lists the
// directory whole at the winner's destination.
func TestDLRenameRaceAcrossProcesses(t *testing.T) {
	c := newMixedCluster(t, dlLayout())
	ctx := context.Background()
	fs := c.DFS(0).NewFileSystemClient("race")
	if _, err := fs.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.NewDirectoryClient("src").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := fs.NewFileClient(fmt.Sprintf("src/f%02d", i)).Create(ctx, nil); err != nil {
			t.Fatal(err)
		}
	}
	const perNode = 3
	codes := make([]string, nodes*perNode)
	var wg sync.WaitGroup
	for n := range nodes {
		cl := c.DFS(n).NewFileSystemClient("race")
		for k := range perNode {
			i := n*perNode + k
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := cl.NewDirectoryClient("src").Rename(ctx, fmt.Sprintf("dst%d", i), nil)
				codes[i] = raceOutcome(err)
			}()
		}
	}
	wg.Wait()
	winner := oneWinner(t, "rename", codes, "404 SourcePathNotFound")
	for n := range nodes {
		page, err := c.DFS(n).NewFileSystemClient("race").NewListPathsPager(true, &filesystem.ListPathsOptions{}).NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("dst%d", winner)
		if len(page.Paths) != 21 {
			t.Fatalf("process %d lists %d paths", n, len(page.Paths))
		}
		for _, p := range page.Paths {
			if !strings.HasPrefix(*p.Name, prefix) {
				t.Fatalf("process %d lists %s", n, *p.Name)
			}
		}
	}
}
