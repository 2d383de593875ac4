package smb

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/file"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/fileerror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azfile/lease"

	"github.com/cerulean-storage/cerulean/internal/app"
)

// restOps are the REST operations of Azure's "managing file locks" table,
// in an order that leaves the file usable by the next one.
var restOps = []struct {
	name string
	do   func(ctx context.Context, fc *file.Client) error
}{
	{"GetProperties", func(ctx context.Context, fc *file.Client) error { _, err := fc.GetProperties(ctx, nil); return err }},
	{"Get", func(ctx context.Context, fc *file.Client) error {
		r, err := fc.DownloadStream(ctx, nil)
		if err == nil {
			r.Body.Close()
		}
		return err
	}},
	{"ListRanges", func(ctx context.Context, fc *file.Client) error { _, err := fc.GetRangeList(ctx, nil); return err }},
	{"SetProps", func(ctx context.Context, fc *file.Client) error { _, err := fc.SetHTTPHeaders(ctx, nil); return err }},
	{"SetMetadata", func(ctx context.Context, fc *file.Client) error {
		v := "1"
		_, err := fc.SetMetadata(ctx, &file.SetMetadataOptions{Metadata: map[string]*string{"k": &v}})
		return err
	}},
	{"PutRange", func(ctx context.Context, fc *file.Client) error {
		_, err := fc.UploadRange(ctx, 0, streaming.NopCloser(bytes.NewReader([]byte("x"))), nil)
		return err
	}},
	{"Lease", func(ctx context.Context, fc *file.Client) error {
		lc, err := lease.NewFileClient(fc, nil)
		if err != nil {
			return err
		}
		if _, err := lc.Acquire(ctx, nil); err != nil {
			return err
		}
		_, err = lc.Release(ctx, nil)
		return err
	}},
	{"Create", func(ctx context.Context, fc *file.Client) error { _, err := fc.Create(ctx, 10, nil); return err }},
	{"Delete", func(ctx context.Context, fc *file.Client) error { _, err := fc.Delete(ctx, nil); return err }},
}

// sharingViolations is the table of Azure's "Managing file locks"
// (https://learn.microsoft.com/en-us/rest/api/storageservices/managing-file-locks):
// which REST operations fail with 409 SharingViolation while an SMB client
// holds the file with all access and the given share mode. Lease fails in
// every row: a lease cannot be acquired while any SMB open holds write or
// delete access (the table's caveat), which these holders (access 0x1F01FF)
// all do.
var sharingViolations = map[string][]string{
	"N":   {"Create", "Get", "SetProps", "SetMetadata", "Delete", "PutRange", "ListRanges", "Lease"},
	"R":   {"Create", "SetProps", "SetMetadata", "Delete", "PutRange", "Lease"},
	"W":   {"Create", "Get", "Delete", "ListRanges", "Lease"},
	"D":   {"Create", "Get", "SetProps", "SetMetadata", "PutRange", "ListRanges", "Delete", "Lease"},
	"RW":  {"Create", "Delete", "Lease"},
	"RD":  {"Create", "SetProps", "SetMetadata", "PutRange", "Delete", "Lease"},
	"WD":  {"Get", "ListRanges", "Delete", "Lease"},
	"RWD": {"Delete", "Lease"},
}

// TestRESTAgainstSMBShareModes holds one file per share mode open over
// SMB with smbtorture's smb2.hold-sharemode (access 0x1F01FF) and runs
// every REST operation kind against each: the ones the table lists get
// 409 SharingViolation, the others succeed. Then smbtorture is killed:
// the server closes the lost connection's handles and every operation
// works again. (smb2.hold-sharemode does not exit on SIGINT here: after
// "Received signal 2" its event loop keeps waiting.)
func TestRESTAgainstSMBShareModes(t *testing.T) {
	bin := need(t, "smbtorture")
	e := start(t)
	sc := e.share("hold")
	// The holder opens with OPEN_IF: make the files first, with content
	// for Put Range and Get to work on.
	if _, err := sc.NewDirectoryClient("sharemode_hold_test").Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	for mode := range sharingViolations {
		e.upload(sc, "sharemode_hold_test/"+mode, []byte("0123456789"))
	}
	ctx, cancel := context.WithTimeout(e.ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "//127.0.0.1/hold", "-p", e.port, "-U", app.DevAccount+"%"+app.DevKey, "smb2.hold-sharemode")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ready := make(chan bool, 1)
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "Waiting for SIGINT") && !ok {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	if !<-ready {
		t.Fatalf("smbtorture smb2.hold-sharemode did not start holding")
	}
	dir := sc.NewDirectoryClient("sharemode_hold_test")
	for _, mode := range []string{"N", "R", "W", "D", "RW", "RD", "WD", "RWD"} {
		fc := dir.NewFileClient(mode)
		for _, op := range restOps {
			err := op.do(e.ctx, fc)
			want := contains(sharingViolations[mode], op.name)
			switch {
			case want && !fileerror.HasCode(err, fileerror.SharingViolation):
				t.Errorf("held %s: %s returned %v, want 409 SharingViolation", mode, op.name, err)
			case !want && err != nil:
				t.Errorf("held %s: %s failed: %v", mode, op.name, err)
			}
		}
	}
	// Kill the holder: its connection's handles close, and everything
	// works.
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	for _, mode := range []string{"N", "RWD"} {
		fc := dir.NewFileClient(mode)
		deadline := time.Now().Add(10 * time.Second)
		for _, op := range restOps {
			for {
				err := op.do(e.ctx, fc)
				if err == nil {
					break
				}
				if !fileerror.HasCode(err, fileerror.SharingViolation) || time.Now().After(deadline) {
					t.Fatalf("after the holder died, %s on %s: %v", op.name, mode, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
