package multiproc

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
)

// TestDLAppendRaceAcrossProcesses: clients of three processes append to
// one file at the same position at once: exactly one append wins, every
// other is 400 InvalidFlushPosition; a flush through another process
// commits the winner's data, which every process then reads.
func TestDLAppendRaceAcrossProcesses(t *testing.T) {
	c := newMixedCluster(t, dlLayout())
	ctx := context.Background()
	fs := c.DFS(0).NewFileSystemClient("appends")
	if _, err := fs.Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.NewFileClient("f").Create(ctx, nil); err != nil {
		t.Fatal(err)
	}
	const perNode, size = 3, 4096
	datas := make([][]byte, nodes*perNode)
	codes := make([]string, nodes*perNode)
	var wg sync.WaitGroup
	for n := range nodes {
		f := c.DFS(n).NewFileSystemClient("appends").NewFileClient("f")
		for k := range perNode {
			i := n*perNode + k
			datas[i] = make([]byte, size)
			if _, err := rand.Read(datas[i]); err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.AppendData(ctx, 0, streaming.NopCloser(bytes.NewReader(datas[i])), nil)
				codes[i] = raceOutcome(err)
			}()
		}
	}
	wg.Wait()
	winner := oneWinner(t, "append at 0", codes, "400 InvalidFlushPosition")
	flusher := (winner/perNode + 1) % nodes
	if _, err := c.DFS(flusher).NewFileSystemClient("appends").NewFileClient("f").FlushData(ctx, size, nil); err != nil {
		t.Fatal(err)
	}
	for n := range nodes {
		resp, err := c.DFS(n).NewFileSystemClient("appends").NewFileClient("f").DownloadStream(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, datas[winner]) {
			t.Fatalf("process %d reads %d bytes that are not the winner's", n, len(got))
		}
	}
}
