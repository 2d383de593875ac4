package e2e

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blockblob"
	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestDLBlockListOfPath: Get Block List of a file written through the
// dfs endpoint reports its committed content as a block (not 404), a
// directory has none, and a client appending a block to the committed
// list (Get Block List, Stage Block, Commit Block List), as on a flat
// account, extends the file; a committed block the file does not have is
// 400 InvalidBlockList.
func TestDLBlockListOfPath(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("blocks")
	f := fs.NewFileClient("d/f.txt")
	_, err := fs.NewDirectoryClient("d").Create(e.ctx, nil)
	must(t, err)
	_, err = f.Create(e.ctx, nil)
	must(t, err)
	must(t, f.UploadBuffer(e.ctx, []byte("written by dfs;"), nil))

	bc := client(t, e.app.BlobURL, app.DevKey).ServiceClient().NewContainerClient("blocks")
	bb := bc.NewBlockBlobClient("d/f.txt")
	bl, err := bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if len(bl.CommittedBlocks) != 1 || *bl.CommittedBlocks[0].Size != int64(len("written by dfs;")) || len(bl.UncommittedBlocks) != 0 {
		t.Fatalf("block list of a dfs file: %+v", bl.BlockList)
	}
	if dl, err := bc.NewBlockBlobClient("d").GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil); err != nil || len(dl.CommittedBlocks) != 0 {
		t.Fatalf("block list of a directory: %v %v", dl, err)
	}
	_, err = bc.NewBlockBlobClient("d/none").GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	wantRaw(t, err, http.StatusNotFound, string(bloberror.BlobNotFound))

	committed := *bl.CommittedBlocks[0].Name
	added := base64.StdEncoding.EncodeToString([]byte("appended-block-0000000"))
	_, err = bb.StageBlock(e.ctx, added, streaming.NopCloser(strings.NewReader(" and by blob")), nil)
	must(t, err)
	bl, err = bb.GetBlockList(e.ctx, blockblob.BlockListTypeUncommitted, nil)
	must(t, err)
	if len(bl.UncommittedBlocks) != 1 || len(bl.CommittedBlocks) != 0 {
		t.Fatalf("uncommitted list: %+v", bl.BlockList)
	}
	bogus := base64.StdEncoding.EncodeToString([]byte("dfs-committed-0000000001"))
	_, err = bb.CommitBlockList(e.ctx, []string{committed, bogus}, nil)
	wantRaw(t, err, http.StatusBadRequest, string(bloberror.InvalidBlockList))
	_, err = bb.CommitBlockList(e.ctx, []string{committed, added}, nil)
	must(t, err)
	if got := download(t, e, f); string(got) != "written by dfs; and by blob" {
		t.Fatalf("after committing the committed block and a new one: %q", got)
	}
	bl, err = bb.GetBlockList(e.ctx, blockblob.BlockListTypeAll, nil)
	must(t, err)
	if len(bl.CommittedBlocks) != 1 || *bl.CommittedBlocks[0].Size != int64(len("written by dfs; and by blob")) {
		t.Fatalf("block list after the commit: %+v", bl.BlockList)
	}
}
