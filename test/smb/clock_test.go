package smb

import (
	"net/http"
	"os"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"

	"github.com/cerulean-storage/cerulean/internal/app"
	"github.com/cerulean-storage/cerulean/internal/server"
)

// TestClockAdvanceKeepsSMBHandles: advancing the server's clock
// (--clock-control) by more than the SMB heartbeat's lease (30 s) leaves
// the handles of a live SMB front end open: the advance extends the
// heartbeat with the clock (handle.ShiftOwners), so REST still gets 409
// SharingViolation, the reaper keeps the handle, and the SMB client goes
// on reading through it. Without the shift the heartbeat lapsed, the
// handle was dead and the delete succeeded under the client's feet.
func TestClockAdvanceKeepsSMBHandles(t *testing.T) {
	e := startWith(t, func(c *app.Config) { c.ClockControl = true })
	sc := e.share("clockheld")
	e.upload(sc, "f.txt", []byte("0123456789"))
	fs := e.mount("clockheld")
	f, err := fs.OpenFile("f.txt", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	resp, err := http.Post("http://"+app.ClientAddr(e.app.Endpoints()["file"])+server.ReservedPrefix+"/clock/advance?by=2m", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("advance: %d", resp.StatusCode)
	}
	if _, err := e.app.File.ReapHandles(e.ctx); err != nil {
		t.Fatal(err)
	}
	fc := fileClient(sc, "f.txt")
	if _, err := fc.Delete(e.ctx, nil); !hasCode(err, fileerror.SharingViolation) {
		t.Fatalf("Delete File while open over SMB, 2 minutes later: %v, want SharingViolation", err)
	}
	got := make([]byte, 4)
	if _, err := f.ReadAt(got, 0); err != nil || string(got) != "0123" {
		t.Fatalf("SMB read after the advance: %q %v", got, err)
	}
}
