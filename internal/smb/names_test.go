package smb

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cerulean-storage/cerulean/internal/smb/smb2"
)

// TestNamesRESTCannotReach: CREATE refuses to make a file or directory
// whose name the File REST API cannot reach (dots alone, C1 control
// characters, U+FFFE/U+FFFF) with STATUS_OBJECT_NAME_INVALID, for every
// disposition that may create, and so does a rename to such a name;
// names REST reaches (trailing dots, with x-ms-allow-trailing-dot) work,
// and an item REST made with a dots-only name can still be opened.
func TestNamesRESTCannotReach(t *testing.T) {
	e := newTestEnv(t)
	c := e.connect()
	d, r := c.create("d", 0x1f01ff, 7, smb2.FileCreate, smb2.FileDirectoryFile)
	status(t, r, smb2.StatusSuccess)
	status(t, c.close(d), smb2.StatusSuccess)
	for _, name := range []string{"...", "....", `d\...`, `d\.....`, "a\u0081b", "\u009f", "a\ufffeb", "a\uffff"} {
		for _, disp := range []smb2.CreateDisposition{smb2.FileCreate, smb2.FileOpenIf, smb2.FileOverwriteIf, smb2.FileSupersede} {
			_, r := c.create(name, 0x1f01ff, 7, disp, 0)
			status(t, r, smb2.StatusObjectNameInvalid)
		}
		_, r := c.create(name, 0x1f01ff, 7, smb2.FileCreate, smb2.FileDirectoryFile)
		status(t, r, smb2.StatusObjectNameInvalid)
	}
	// The shared REST rules still answer for "." and "..".
	_, r = c.create(".", 0x1f01ff, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusObjectNameInvalid)
	_, r = c.create(`d\..`, 0x1f01ff, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusObjectPathSyntaxBad)

	// Trailing dots are a name REST reaches (x-ms-allow-trailing-dot).
	f, r := c.create("file..", 0x1f01ff, 7, smb2.FileCreate, 0)
	status(t, r, smb2.StatusSuccess)
	for _, target := range []string{"...", `d\...`, "x\u0085"} {
		r := c.call(smb2.CommandSetInfo, smb2.SetInfoRequest{InfoType: smb2.InfoTypeFile, FileInfoClass: smb2.FileRenameInformationClass, FileID: f,
			Buffer: smb2.FileRenameInformation{FileName: target}.Encode()}.Encode())
		status(t, r, smb2.StatusObjectNameInvalid)
	}
	status(t, c.close(f), smb2.StatusSuccess)
	e.rest(http.MethodHead, "/"+testShare+"/file..", "", http.StatusOK, "x-ms-allow-trailing-dot", "true")

	// Nothing else was made: the share holds d and file.. only.
	list := e.rest(http.MethodGet, "/"+testShare+"?restype=directory&comp=list", "", http.StatusOK).Body.String()
	if strings.Count(list, "<Name>") != 2 || !strings.Contains(list, "<Name>d</Name>") || !strings.Contains(list, "<Name>file..</Name>") {
		t.Fatalf("listing: %s", list)
	}

	// A dots-only name made over REST opens over SMB.
	e.rest(http.MethodPut, "/"+testShare+"/...", "", http.StatusCreated, "x-ms-type", "file", "x-ms-content-length", "0", "x-ms-allow-trailing-dot", "true")
	f, r = c.create("...", 0x1f01ff, 7, smb2.FileOpen, 0)
	status(t, r, smb2.StatusSuccess)
	status(t, c.close(f), smb2.StatusSuccess)
}
