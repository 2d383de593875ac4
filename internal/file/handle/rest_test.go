package handle

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

var allOps = []string{
	OpCreateFile, OpGetFile, OpGetFileProperties, OpGetFileMetadata, OpSetFileProperties,
	OpSetFileMetadata, OpDeleteFile, OpPutRange, OpPutRangeFromURL, OpListRanges,
	OpLeaseFileAcquire, OpLeaseFileOther, OpCopyFileSource, OpCopyFileDest, OpAbortCopyFile,
	OpRenameFile, OpRenameReplace, OpDeleteDirectory, OpGetDirectory, OpSetDirectory,
	OpRenameDirectory, OpCreateHardLink, OpListDirsAndFiles,
}

func TestRESTTableComplete(t *testing.T) {
	if len(allOps) != len(restTable) {
		t.Errorf("%d Op constants, %d table rows", len(allOps), len(restTable))
	}
	for _, op := range allOps {
		if _, ok := RESTAccess(op); !ok {
			t.Errorf("RESTAccess(%q) missing", op)
		}
	}
	if _, ok := RESTAccess("getBlob"); ok {
		t.Error("RESTAccess knows getBlob")
	}
}

// docOps are the operations the share-mode table of "Managing file locks"
// covers, with the File access equivalent table's N/A operations (which
// never fail).
var docOps = []string{
	OpCreateFile, OpGetFile, OpSetFileProperties, OpSetFileMetadata, OpDeleteFile,
	OpPutRange, OpListRanges, OpLeaseFileAcquire, OpGetFileProperties, OpGetFileMetadata,
}

// TestRESTShareModeTable checks CheckREST against the table "SMB client
// sharing mode implications on FileREST", row by row, for an SMB handle
// opened with Read access (the scenarios' reader) and for the same
// handle opened attribute-only, which blocks only Delete File.
func TestRESTShareModeTable(t *testing.T) {
	rows := []struct {
		mode  ShareAccess
		fails []string
	}{
		{ShareNone, []string{OpCreateFile, OpGetFile, OpSetFileProperties, OpSetFileMetadata, OpDeleteFile, OpPutRange, OpListRanges, OpLeaseFileAcquire}},
		{ShareRead, []string{OpCreateFile, OpSetFileProperties, OpSetFileMetadata, OpDeleteFile, OpPutRange, OpLeaseFileAcquire}},
		{ShareWrite, []string{OpCreateFile, OpGetFile, OpDeleteFile, OpListRanges, OpLeaseFileAcquire}},
		{ShareDelete, []string{OpCreateFile, OpGetFile, OpSetFileProperties, OpSetFileMetadata, OpPutRange, OpListRanges, OpDeleteFile, OpLeaseFileAcquire}},
		{ShareRead | ShareWrite, []string{OpCreateFile, OpDeleteFile, OpLeaseFileAcquire}},
		{ShareRead | ShareDelete, []string{OpCreateFile, OpSetFileProperties, OpSetFileMetadata, OpPutRange, OpDeleteFile, OpLeaseFileAcquire}},
		{ShareWrite | ShareDelete, []string{OpGetFile, OpListRanges, OpDeleteFile, OpLeaseFileAcquire}},
		{ShareAll, []string{OpDeleteFile}},
	}
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		for i, row := range rows {
			for _, acc := range []Access{Read, 0} {
				fid := fmt.Sprintf("row%d-%d", i, acc)
				e.mustOpen(OpenRequest{FileID: fid, Access: acc, ShareAccess: row.mode})
				for _, op := range docOps {
					wantFail := slices.Contains(row.fails, op)
					if acc == 0 {
						wantFail = op == OpDeleteFile
					}
					err := e.checkREST(fid, op)
					switch {
					case wantFail && !errors.Is(err, ErrSharingViolation):
						t.Errorf("share %v, access %v: %s gave %v, want SharingViolation", row.mode, acc, op, err)
					case !wantFail && err != nil:
						t.Errorf("share %v, access %v: %s gave %v, want success", row.mode, acc, op, err)
					}
				}
			}
		}
		// No handles at all: everything passes.
		for _, op := range allOps {
			if err := e.checkREST("nofile", op); err != nil {
				t.Errorf("%s on a file without handles: %v", op, err)
			}
		}
	})
}

// TestRESTLeaseAccessTable checks the table "SMB file locking
// implications on FileREST Lease File API": acquiring a lease fails iff
// a handle has Write or Delete access (sharing everything).
func TestRESTLeaseAccessTable(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		for acc := range Access(8) {
			fid := fmt.Sprintf("f%d", acc)
			e.mustOpen(OpenRequest{FileID: fid, Access: acc, ShareAccess: ShareAll})
			err := e.checkREST(fid, OpLeaseFileAcquire)
			if wantFail := acc&(Write|Delete) != 0; wantFail != errors.Is(err, ErrSharingViolation) || !wantFail && err != nil {
				t.Errorf("handle access %v: lease acquire gave %v, want fail=%v", acc, err, wantFail)
			}
		}
	})
}

// TestRESTDocumentedExamples: the two FileREST examples of the page.
func TestRESTDocumentedExamples(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		// SMB: FileAccess.Read, FileShare.Write → Get File fails.
		e.mustOpen(OpenRequest{FileID: "a", Access: Read, ShareAccess: ShareWrite})
		if err := e.checkREST("a", OpGetFile); !errors.Is(err, ErrSharingViolation) {
			t.Errorf("Get File: %v", err)
		}
		// SMB: FileAccess.Write, FileShare.Read → Put Range fails.
		e.mustOpen(OpenRequest{FileID: "b", Access: Write, ShareAccess: ShareRead})
		if err := e.checkREST("b", OpPutRange); !errors.Is(err, ErrSharingViolation) {
			t.Errorf("Put Range: %v", err)
		}
		if err := e.checkREST("b", OpGetFile); err != nil {
			t.Errorf("Get File under FileShare.Read: %v", err)
		}
	})
}

// TestLeasedOpen: the table "FileREST Lease File implications for SMB
// file locking": on a leased file, opens with Write or Delete access fail.
func TestLeasedOpen(t *testing.T) {
	forEachStore(t, func(t *testing.T, db kv.Store) {
		e := newEnv(t, db)
		e.heartbeat("fe1", time.Hour)
		for acc := range Access(8) {
			_, err := e.open(OpenRequest{FileID: "f", Access: acc, ShareAccess: ShareAll, Leased: true})
			wantFail := acc&(Write|Delete) != 0
			if wantFail != errors.Is(err, ErrSharingViolation) || !wantFail && err != nil {
				t.Errorf("leased file, open with %v: %v, want fail=%v", acc, err, wantFail)
			}
		}
	})
}
