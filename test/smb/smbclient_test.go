package smb

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSmbclient drives smbclient through ls, put, get, mkdir, rename, rm
// and rmdir in every dialect it speaks, and checks each step over REST.
func TestSmbclient(t *testing.T) {
	e := start(t)
	for _, proto := range []string{"SMB2_02", "SMB2_10", "SMB3_00", "SMB3_02", "SMB3_11"} {
		t.Run(proto, func(t *testing.T) {
			e := *e
			e.t = t
			name := strings.ToLower(strings.ReplaceAll(proto, "_", ""))
			sc := e.share(name)
			dir := t.TempDir()
			local := randomBytes(3<<20 + 12345)
			if err := os.WriteFile(filepath.Join(dir, "local.bin"), local, 0o644); err != nil {
				t.Fatal(err)
			}
			// A file made over REST, read over SMB.
			fromREST := randomBytes(200000)
			e.upload(sc, "rest.bin", fromREST)

			out, err := e.smbclient(name, proto, dir, "ls; put local.bin up.bin; get rest.bin got.bin; mkdir d1; mkdir d2; rename up.bin d1\\moved.bin; ls d1\\*")
			if err != nil {
				t.Fatalf("smbclient: %v\n%s", err, out)
			}
			for _, want := range []string{"rest.bin", "moved.bin"} {
				if !strings.Contains(out, want) {
					t.Errorf("listing lacks %s:\n%s", want, out)
				}
			}
			got, err := os.ReadFile(filepath.Join(dir, "got.bin"))
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, "REST file read over SMB", got, fromREST)
			// The file put over SMB, renamed over SMB, read over REST.
			rest, err := e.download(sc, "d1/moved.bin")
			if err != nil {
				t.Fatal(err)
			}
			mustEqual(t, "SMB file read over REST", rest, local)
			if names := e.list(sc.NewRootDirectoryClient()); !slices.Equal(names, []string{"d1/", "d2/", "rest.bin"}) {
				t.Fatalf("REST listing %v", names)
			}

			out, err = e.smbclient(name, proto, dir, "rm d1\\moved.bin; rmdir d1; rmdir d2; rm rest.bin; ls")
			if err != nil {
				t.Fatalf("smbclient: %v\n%s", err, out)
			}
			if strings.Contains(out, "NT_STATUS") {
				t.Fatalf("smbclient reported an error:\n%s", out)
			}
			if names := e.list(sc.NewRootDirectoryClient()); len(names) != 0 {
				t.Fatalf("REST listing after rm/rmdir: %v", names)
			}
		})
	}
}

// TestSmbclientDirectoryListing checks ls of an empty directory ("." and
// ".." keep smbclient from printing NO_SUCH_FILE), of many entries
// (several QUERY_DIRECTORY rounds) and with wildcards.
func TestSmbclientDirectoryListing(t *testing.T) {
	e := start(t)
	sc := e.share("listing")
	out, err := e.smbclient("listing", "SMB3", t.TempDir(), "ls")
	if err != nil || strings.Contains(out, "NT_STATUS") {
		t.Fatalf("ls of an empty share: %v\n%s", err, out)
	}
	if _, err := sc.NewDirectoryClient("many").Create(e.ctx, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 700; i++ {
		e.upload(sc, "many/file-"+strings.Repeat("x", i%40)+"-"+itoa(i)+".txt", nil)
	}
	e.upload(sc, "many/other.dat", []byte("1"))
	out, err = e.smbclient("listing", "SMB3", t.TempDir(), "ls many\\*")
	if err != nil {
		t.Fatalf("ls: %v\n%s", err, out)
	}
	if n := strings.Count(out, ".txt"); n != 700 {
		t.Fatalf("ls listed %d .txt files, want 700", n)
	}
	out, err = e.smbclient("listing", "SMB3", t.TempDir(), "ls many\\*.dat")
	if err != nil || !strings.Contains(out, "other.dat") || strings.Contains(out, ".txt") {
		t.Fatalf("ls *.dat: %v\n%s", err, out)
	}
}

func itoa(i int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
		if i == 0 {
			return string(b)
		}
	}
}

// TestSmbclientWrongKey: a key that is not the account's is a logon
// failure; the second key works like the first.
func TestSmbclientWrongKey(t *testing.T) {
	e := start(t)
	e.share("keys")
	wrong := strings.Repeat("A", 86) + "=="
	out, err := e.smbclient("keys", "SMB3", t.TempDir(), "ls", wrong)
	if err == nil || !strings.Contains(out, "NT_STATUS_LOGON_FAILURE") {
		t.Fatalf("wrong key: %v\n%s", err, out)
	}
	out, err = e.smbclient("nosuchshare", "SMB3", t.TempDir(), "ls")
	if err == nil || !strings.Contains(out, "NT_STATUS_BAD_NETWORK_NAME") {
		t.Fatalf("unknown share: %v\n%s", err, out)
	}
}
