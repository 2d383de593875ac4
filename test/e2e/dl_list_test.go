package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azdatalake/filesystem"
)

// TestDLFilesystemRoot: a filesystem of a hierarchical account has a root
// directory from its creation (through the Blob API as through the dfs
// API): List Paths answers an empty list, not FilesystemNotFound; a
// deleted and re-created filesystem starts empty.
func TestDLFilesystemRoot(t *testing.T) {
	e := startDL(t, true)
	fs := e.mkfs("rooted")
	pager := fs.NewListPathsPager(true, nil)
	page, err := pager.NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 0 || pager.More() {
		t.Fatalf("new filesystem lists %d paths", len(page.Paths))
	}
	resp, body := e.raw(http.MethodGet, "/rooted?resource=filesystem&recursive=false", nil, nil)
	var out struct {
		Paths []json.RawMessage `json:"paths"`
	}
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || out.Paths == nil || len(out.Paths) != 0 {
		t.Fatalf("list: %d %s", resp.StatusCode, body)
	}
	// recursive is required.
	resp, body = e.raw(http.MethodGet, "/rooted?resource=filesystem", nil, nil)
	if code, _ := dfsError(t, body); resp.StatusCode != 400 || code != "MissingRequiredQueryParameter" {
		t.Fatalf("no recursive: %d %s", resp.StatusCode, body)
	}
	_, err = fs.Delete(e.ctx, nil)
	must(t, err)
	_, err = fs.NewListPathsPager(true, nil).NextPage(e.ctx)
	wantDL(t, err, 404, "FilesystemNotFound")
	resp, _ = e.raw(http.MethodPut, "/rooted?resource=filesystem", nil, nil)
	if resp.StatusCode != 201 {
		t.Fatalf("re-create: %d", resp.StatusCode)
	}
	page, err = e.fs("rooted").NewListPathsPager(true, &filesystem.ListPathsOptions{}).NextPage(e.ctx)
	must(t, err)
	if len(page.Paths) != 0 {
		t.Fatalf("re-created filesystem lists %d paths", len(page.Paths))
	}
}

// TestDLFlatAccountRefuses: on an account without a hierarchical
// namespace the operations that need one answer 400
// HierarchicalNamespaceNotEnabled, as Azure's dfs endpoint does (the
// answer Hadoop's ABFS driver and Arrow's Azure filesystem read to tell a
// flat account).
func TestDLFlatAccountRefuses(t *testing.T) {
	e := startDL(t, false)
	fs := e.mkfs("flat")
	_, err := fs.NewListPathsPager(true, nil).NextPage(e.ctx)
	wantDL(t, err, 400, "HierarchicalNamespaceNotEnabled")
}
