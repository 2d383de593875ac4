package file

import (
	"bytes"
	"context"
	"fmt"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/file/handle"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ListFilesAndDirectoriesInput is the input of ListFilesAndDirectories.
type ListFilesAndDirectoriesInput struct {
	// Ref names the directory (Path nil: the share root), live or in a
	// share snapshot.
	Ref
	// Prefix selects the entries whose names start with it (compared
	// case-insensitively).
	Prefix string
	// From is where the previous page stopped (its Next); "" for the
	// first page.
	From string
	// MaxResults bounds the page (at least 1).
	MaxResults int
}

// ListFilesAndDirectoriesOutput is a page of ListFilesAndDirectories.
type ListFilesAndDirectoriesOutput struct {
	// Directory is the listed directory.
	Directory *Entry
	// Entries are its children in name order.
	Entries []*Entry
	// Next continues the listing (the next page's From); "" when it is
	// complete.
	Next string
}

// ListFilesAndDirectories is List Directories and Files on a directory
// or the share root, in one read transaction. Delete-pending entries are
// not listed (listChildren).
func (s *Service) ListFilesAndDirectories(ctx context.Context, in ListFilesAndDirectoriesInput) (ListFilesAndDirectoriesOutput, error) {
	var out ListFilesAndDirectoriesOutput
	c := in.caller()
	err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		out = ListFilesAndDirectoriesOutput{}
		if out.Directory, err = s.dom().readable(tx, &c, &opListFilesAndDirectories, true); err != nil {
			return err
		}
		out.Entries, out.Next, err = listChildren(tx, in.Account, in.Share, in.Snapshot, out.Directory.ID, fold(in.Prefix), in.From, in.MaxResults)
		return err
	})
	return out, err
}

// listChildren returns up to max entries of directory dir whose folded
// name starts with foldedPrefix, from the folded name from on ("" from the
// first), skipping delete-pending entries of the live share. next is the
// folded name of the first entry left out ("" when none is).
func listChildren(tx kv.Tx, acct, sh, snap string, dir uint64, foldedPrefix, from string, max int) (out []*Entry, next string, err error) {
	base := childrenPrefix(acct, sh, snap, dir)
	start := kv.AppendPartial(append([]byte(nil), base...), foldedPrefix)
	end := kv.PrefixEnd(start)
	if from != "" {
		if k := entryKey(acct, sh, snap, dir, from); bytes.Compare(k, start) > 0 {
			start = k
		}
	}
	// Delete-pending entries of the live share are left out: one read of
	// the share's pending index covers every entry.
	var pending map[string]bool
	if snap == "" {
		if pending, err = handle.DeletePendingIn(tx, acct, sh); err != nil {
			return nil, "", err
		}
	}
	// One scan, stopped at the first entry past max that is listed; the
	// only entries skipped are the root's own record and pending ones, which
	// bounds it.
	var derr error
	err = tx.Scan(start, end, max+2+len(pending), false, func(k, v []byte) bool {
		var e Entry
		if derr = json.Unmarshal(v, &e); derr != nil {
			derr = fmt.Errorf("decoding %q: %w", k, derr)
			return false
		}
		switch {
		case e.ID == RootID:
			// The root's own record sorts first among its children
			// (rootKey is entryKey(RootID, "")).
		case pending[FormatID(e.ID)]:
		case len(out) == max:
			next = fold(e.Name)
			return false
		default:
			out = append(out, &e)
		}
		return true
	})
	if err = firstErr(err, derr); err != nil {
		return nil, "", err
	}
	return out, next, nil
}
