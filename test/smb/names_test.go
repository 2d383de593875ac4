package smb

import (
	"os"
	"slices"
	"strings"
	"testing"
)

const statusObjectNameInvalid = 0xC0000033

// TestGoSMB2UnreachableNames: through go-smb2, a directory or file named
// with dots alone (or with a C1 control character) is refused with
// STATUS_OBJECT_NAME_INVALID, as is a rename to such a name; a trailing
// dot is accepted, and the REST listing shows exactly what SMB made.
func TestGoSMB2UnreachableNames(t *testing.T) {
	e := start(t)
	sc := e.share("names")
	fs := e.mount("names")
	if err := fs.Mkdir("d", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"...", "....", `d\...`, "a\u0081b"} {
		if err := fs.Mkdir(name, 0o755); !ntStatus(err, statusObjectNameInvalid) {
			t.Errorf("mkdir %q: %v, want OBJECT_NAME_INVALID", name, err)
		}
		if err := fs.WriteFile(name, []byte("x"), 0o644); !ntStatus(err, statusObjectNameInvalid) {
			t.Errorf("create %q: %v, want OBJECT_NAME_INVALID", name, err)
		}
	}
	if err := fs.WriteFile("file.", []byte("x"), 0o644); err != nil {
		t.Fatalf("create file.: %v", err)
	}
	if err := fs.Rename("file.", "..."); !ntStatus(err, statusObjectNameInvalid) {
		t.Fatalf("rename to ...: %v, want OBJECT_NAME_INVALID", err)
	}
	if _, err := fs.Stat("..."); !os.IsNotExist(err) && !ntStatus(err, statusObjectNotFound) {
		t.Fatalf("stat ...: %v", err)
	}
	got := e.list(sc.NewRootDirectoryClient())
	slices.Sort(got)
	if !slices.Equal(got, []string{"d/", "file."}) {
		t.Fatalf("REST listing: %q", got)
	}
}

// TestSmbclientUnreachableNames: smbclient's mkdir of "..." and "...."
// prints NT_STATUS_OBJECT_NAME_INVALID and makes nothing.
func TestSmbclientUnreachableNames(t *testing.T) {
	e := start(t)
	sc := e.share("names2")
	for _, name := range []string{"...", "...."} {
		out, _ := e.smbclient("names2", "SMB3", t.TempDir(), "mkdir "+name)
		if !strings.Contains(out, "NT_STATUS_OBJECT_NAME_INVALID") {
			t.Errorf("smbclient mkdir %s:\n%s", name, out)
		}
	}
	if got := e.list(sc.NewRootDirectoryClient()); len(got) != 0 {
		t.Fatalf("REST listing: %q", got)
	}
}
