package blobrest

import (
	"testing"

	"github.com/cerulean-storage/cerulean/internal/server"
)

// TestRouteFlagsMatchReference walks the route table and checks that the
// anonymous-read and batch flags are set on exactly the operations Azure
// documents: Manage anonymous read access to containers and blobs,
// "Features available to anonymous users" (Get Blob, Get Blob
// Properties, Get Blob Metadata, Get Block List and Get Page Ranges with
// either public access level; Get Container Properties, Get Container
// Metadata and List Blobs with full public read access only; nothing at
// the account), Blob Batch (Delete Blob and Set Blob Tier), and the
// customer-provided key that Copy Blob refuses (errCPKCopy). Every
// entry of an operation carries its flags (Get Blob Metadata is the
// comp=metadata entry of getBlobProperties).
func TestRouteFlagsMatchReference(t *testing.T) {
	want := map[string]uint32{
		"getBlob":                fPublicBlob,
		"getBlobProperties":      fPublicBlob,
		"getBlockList":           fPublicBlob,
		"getPageRanges":          fPublicBlob,
		"getContainerProperties": fPublicContainer,
		"listBlobs":              fPublicContainer,
		"deleteBlob":             fBatchable,
		"setBlobTier":            fBatchable,
		"copyBlob":               fNoCPK,
	}
	const mask = fPublicBlob | fPublicContainer | fBatchable | fNoCPK
	seen := map[string]bool{}
	for _, rt := range blobRoutes.All() {
		seen[rt.Name] = true
		if got := rt.Flags & mask; got != want[rt.Name] {
			t.Errorf("%s (%s level %#x ?restype=%s&comp=%s): flags %#x, want %#x", rt.Name, rt.Methods, rt.Levels, rt.Restype, rt.Comp, got, want[rt.Name])
		}
		// Anonymous reads are GET or HEAD, of a container or a blob.
		if rt.Flags&(fPublicBlob|fPublicContainer) != 0 && (rt.Methods&^(server.GET|server.HEAD) != 0 || rt.Levels&lAccount != 0) {
			t.Errorf("%s: an anonymous read that is not a GET/HEAD of a container or blob", rt.Name)
		}
		if rt.Flags&fPublicBlob != 0 && rt.Levels != lBlob || rt.Flags&fPublicContainer != 0 && rt.Levels != lContainer {
			t.Errorf("%s: public access flag at the wrong level", rt.Name)
		}
		if rt.Flags&fBatchable != 0 && rt.Levels != lBlob {
			t.Errorf("%s: a batch carries blob operations only", rt.Name)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("no route %q", name)
		}
	}
}
