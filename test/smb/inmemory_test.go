package smb

import (
	"io"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// TestInMemoryLimitDiskFull: over SMB, a write that would take the
// in-memory store (--in-memory) past --extent-memory-limit fails with
// STATUS_DISK_FULL (MS-ERREF 2.3.1), as on a full volume, and leaves the
// file's bytes as they were; REST reads them back unchanged.
func TestInMemoryLimitDiskFull(t *testing.T) {
	const limit = 1 << 20
	const size = 600 << 10
	e := startWith(t, func(c *app.Config) {
		c.InMemory, c.ExtentMemoryLimit, c.Postgres = true, limit, ""
	})
	sc := e.share("memfull")
	fs := e.mount("memfull")
	first := randomBytes(size)
	f, err := fs.Create("f.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(first); err != nil {
		t.Fatalf("first write: %v", err)
	}
	_, err = f.WriteAt(randomBytes(size), size)
	if !ntStatus(err, 0xC000007F) { // STATUS_DISK_FULL
		t.Fatalf("write past the limit: %v, want STATUS_DISK_FULL", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g, err := fs.Open("f.bin")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(g)
	g.Close()
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "SMB read", got, first)
	rest, err := e.download(sc, "f.bin")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "REST read", rest, first)
}
