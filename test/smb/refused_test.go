package smb

import (
	"os"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// TestRefusedWriteFreesRoom: an SMB WRITE larger than 64 KiB (its bytes
// staged as a chunk, not inline) refused after its upload, by another
// open's byte-range lock (STATUS_FILE_LOCK_CONFLICT), gives its room
// back with the refusal (extent.Staged.Finish), as a refused REST write
// does, not only once the orphan sweep runs hours later. On the
// in-memory store with a 1 MiB --extent-memory-limit, two more writes
// of 600 KiB then fit one after the other only without the refused
// chunk.
func TestRefusedWriteFreesRoom(t *testing.T) {
	const limit = 1 << 20
	const size = 600 << 10
	e := startWith(t, func(c *app.Config) {
		c.InMemory, c.ExtentMemoryLimit, c.Postgres = true, limit, ""
	})
	sc := e.share("refused")
	e.upload(sc, "f.bin", randomBytes(1024)) // inline: no chunk
	lc := e.lockClient("refused")
	fid := lc.open("f.bin")
	if st := lc.lock(fid, 0, limit, smb2.LockFlagExclusive|smb2.LockFlagFailImmediately); st != smb2.StatusSuccess {
		t.Fatalf("lock: %v", st)
	}
	f, err := e.mount("refused").OpenFile("f.bin", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(randomBytes(size), 0); !ntStatus(err, statusFileLockConflict) {
		t.Fatalf("write into the locked range: %v, want STATUS_FILE_LOCK_CONFLICT", err)
	}
	if st := lc.lock(fid, 0, limit, smb2.LockFlagUnlock); st != smb2.StatusSuccess {
		t.Fatalf("unlock: %v", st)
	}
	// The refused 600 KiB no longer count, so 600 KiB fit under 1 MiB;
	// 600 KiB more do not (the limit holds).
	want := randomBytes(size)
	if _, err := f.WriteAt(want, 0); err != nil {
		t.Fatalf("write after the refused one: %v (the refused write's chunk still holds its room)", err)
	}
	if _, err := f.WriteAt(randomBytes(size), size); !ntStatus(err, 0xC000007F) { // STATUS_DISK_FULL
		t.Fatalf("write past the limit: %v, want STATUS_DISK_FULL", err)
	}
	got, err := e.download(sc, "f.bin")
	if err != nil {
		t.Fatal(err)
	}
	mustEqual(t, "REST read", got, want)
}
