package blob

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/cond"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
)

// TestDataLakeRecords: on a hierarchical account whose log is on, each
// committed Data Lake operation appends one DFS record, in order, with
// its event type, api, subject, request ids and (a rename) source; a
// refused one and a flush without close append none; with the log off
// nothing is recorded; and the change feed is off for the account even
// when asked for (Azure has none for hierarchical accounts).
func TestDataLakeRecords(t *testing.T) {
	s, _, _ := hnsEnv(t)
	ctx := context.Background()
	fs := ns.FS{Account: "acct", Filesystem: "fs"}
	s.SetChangeFeed(func(string) bool { return true })
	if s.ChangeFeedOn("acct") || !s.ChangeFeedOn("flat") {
		t.Fatal("the change feed is on for the hierarchical account, or off for the flat one")
	}
	// The log off: nothing recorded.
	if _, err := s.CreatePath(ctx, CreatePathInput{FS: fs, Create: ns.CreateInput{Path: "quiet", Dir: true}}); err != nil {
		t.Fatal(err)
	}
	if got := changes(t, s, "acct"); len(got) != 0 {
		t.Fatalf("recorded with the log off: %+v", got)
	}
	s.SetChangeLog(func(a string) bool { return a == "acct" })
	call := func(id string) Call { return Call{RequestID: id, ClientRequestID: "c-" + id} }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err := s.CreatePath(ctx, CreatePathInput{Call: call("1"), FS: fs, Create: ns.CreateInput{Path: "d", Dir: true}})
	must(err)
	_, err = s.CreatePath(ctx, CreatePathInput{Call: call("2"), FS: fs, Create: ns.CreateInput{Path: "d/x"}})
	must(err)
	// Refused: no record.
	if _, err := s.CreatePath(ctx, CreatePathInput{Call: call("r"), FS: fs, Create: ns.CreateInput{Path: "d/x", Cond: cond.Conditions{IfNoneMatch: []string{"*"}}}}); err == nil {
		t.Fatal("create over an existing file with If-None-Match: * succeeded")
	}
	p := PathRef{Account: "acct", Filesystem: "fs", Path: "d/x"}
	_, err = s.AppendData(ctx, AppendDataInput{Call: call("a"), PathRef: p, Position: 0, Body: bytes.NewReader([]byte("abc")), Length: 3})
	must(err)
	_, err = s.FlushData(ctx, FlushDataInput{Call: call("f"), PathRef: p, Position: 3})
	must(err)
	_, err = s.AppendData(ctx, AppendDataInput{Call: call("a2"), PathRef: p, Position: 3, Body: bytes.NewReader([]byte("de")), Length: 2})
	must(err)
	_, err = s.FlushData(ctx, FlushDataInput{Call: call("3"), PathRef: p, Position: 5, Close: true})
	must(err)
	_, err = s.RenamePath(ctx, RenamePathInput{Call: call("4"), FS: fs, Rename: ns.RenameInput{SourceFilesystem: "fs", Source: "d/x", Dest: "d/y"}})
	must(err)
	_, err = s.RenamePath(ctx, RenamePathInput{Call: call("5"), FS: fs, Rename: ns.RenameInput{SourceFilesystem: "fs", Source: "d", Dest: "e"}})
	must(err)
	_, err = s.DeletePath(ctx, DeletePathInput{Call: call("6"), FS: fs, Delete: ns.DeleteInput{Path: "e/y"}})
	must(err)
	_, err = s.DeletePath(ctx, DeletePathInput{Call: call("7"), FS: fs, Delete: ns.DeleteInput{Path: "e", Recursive: true}})
	must(err)
	want := []struct{ typ, api, path, src string }{
		{changelog.DirectoryCreated, "CreateDirectory", "d", ""},
		{changelog.BlobCreated, "CreateFile", "d/x", ""},
		{changelog.BlobCreated, "FlushWithClose", "d/x", ""},
		{changelog.BlobRenamed, "RenameFile", "d/y", "/fs/d/x"},
		{changelog.DirectoryRenamed, "RenameDirectory", "e", "/fs/d"},
		{changelog.BlobDeleted, "DeleteFile", "e/y", ""},
		{changelog.DirectoryDeleted, "DeleteDirectory", "e", ""},
	}
	got := changes(t, s, "acct")
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if !g.DFS || g.EventType != w.typ || g.Data.API != w.api || g.Subject != changelog.Subject("fs", w.path) || g.Data.SourcePath != w.src ||
			g.Data.RequestID != string("1234567"[i]) || g.Data.ClientRequestID != "c-"+g.Data.RequestID {
			t.Errorf("record %d: %+v, want %+v", i, g, w)
		}
	}
	if f := got[2]; f.Data.ContentLength != 5 || f.Data.ContentOffset != 3 || f.Data.BlobType != BlockBlob || f.Data.ETag == "" || strings.Contains(f.Data.ETag, `"`) {
		t.Errorf("FlushWithClose record %+v: want length 5 from offset 3", f.Data)
	}
	if !got[6].Data.Recursive || got[5].Data.Recursive {
		t.Errorf("recursive: %v %v", got[5].Data.Recursive, got[6].Data.Recursive)
	}
}

// TestFeedChunkSkipsDataLakeRecords: a DFS record in an account's log
// (one made hierarchical for a while) is no change feed record: the
// chunk file is the one without it.
func TestFeedChunkSkipsDataLakeRecords(t *testing.T) {
	hour := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	blob := changelog.Record{Seq: 1, ID: "a", EventType: changelog.BlobCreated, Subject: changelog.Subject("c", "b"), EventTime: hour, Data: changelog.Data{API: "PutBlob", Sequencer: changelog.Sequencer(1)}}
	dfs := changelog.Record{Seq: 2, ID: "b", DFS: true, EventType: changelog.DirectoryCreated, Subject: changelog.Subject("c", "d"), EventTime: hour, Data: changelog.Data{API: "CreateDirectory", Sequencer: changelog.Sequencer(2)}}
	with, err := feedChunk("acct", hour, []changelog.Record{blob, dfs})
	if err != nil {
		t.Fatal(err)
	}
	without, err := feedChunk("acct", hour, []changelog.Record{blob})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(with, without) {
		t.Fatal("the DFS record is in the change feed's chunk")
	}
	if one, _ := feedChunk("acct", hour, []changelog.Record{dfs}); bytes.Equal(one, without) {
		t.Fatal("the test cannot tell: a chunk of no blob record is the chunk of one")
	}
}
