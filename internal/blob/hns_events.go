package blob

import (
	"strings"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The Data Lake operations' hook into the change log. On a hierarchical
// account Event Grid raises, for the Data Lake Storage Gen2 REST API
// ("Azure Blob Storage as an Event Grid source",
// https://learn.microsoft.com/en-us/azure/event-grid/event-schema-blob-storage,
// "Data Lake Storage Gen2 events"):
//
//	Path - Create (file)             BlobCreated       api CreateFile
//	Path - Update flush, close=true  BlobCreated       api FlushWithClose
//	Path - Create with a rename      BlobRenamed       api RenameFile
//	                                 DirectoryRenamed  api RenameDirectory
//	Path - Create (directory)        DirectoryCreated  api CreateDirectory
//	Path - Delete (file)             BlobDeleted       api DeleteFile
//	Path - Delete (directory)        DirectoryDeleted  api DeleteDirectory (data.recursive)
//
// The Blob API's writes of files on such an account raise the blob
// events they raise on any account (Put Blob, Put Block List and Copy
// Blob BlobCreated, Delete Blob of a file BlobDeleted, with the Blob
// endpoint's URL): hns_blob.go records them here too.
//
// Each is appended to the account's change log in the transaction that
// makes the change, as the Blob writes' records are (domain_changes.go),
// when something reads the account's log (SetChangeLog: an event
// subscription). The records are marked DFS: Azure's change feed does
// not support hierarchical accounts, so the change feed is off for them
// (ChangeFeedOn) and its files pass DFS records over.

// The data.api names of the Data Lake operations.
const (
	apiCreateFile      = "CreateFile"
	apiFlushWithClose  = "FlushWithClose"
	apiRenameFile      = "RenameFile"
	apiRenameDirectory = "RenameDirectory"
	apiCreateDirectory = "CreateDirectory"
	apiDeleteFile      = "DeleteFile"
	apiDeleteDirectory = "DeleteDirectory"
)

// dfsChanged appends the record of Data Lake operation api of call c on
// path in fs (n: the node as the operation left it, or as it was before
// a delete) to the account's log in tx, when the log is on.
func (s *Service) dfsChanged(tx kv.Tx, c Call, fs ns.FS, path string, n *ns.Node, typ, api string, edit func(*changelog.Record)) error {
	if !s.logging(fs.Account) || n == nil {
		return nil
	}
	r := changelog.Record{EventType: typ, DFS: true, Subject: changelog.Subject(fs.Filesystem, strings.TrimPrefix(path, "/")),
		EventTime: s.now(c), Data: changelog.Data{API: api, RequestID: c.RequestID, ClientRequestID: c.ClientRequestID}}
	if !n.Dir {
		r.Data.ETag, r.Data.ContentType, r.Data.ContentLength, r.Data.BlobType = strings.Trim(n.ETag, `"`), n.Props.Type, n.Size, BlockBlob
		if n.Append != nil {
			r.Data.BlobType = AppendBlob
		}
	} else {
		r.Data.ETag = strings.Trim(n.ETag, `"`)
	}
	if edit != nil {
		edit(&r)
	}
	_, err := changelog.Append(tx, fs.Account, r)
	if err == nil && s.appended != nil {
		s.appended(fs.Account)
	}
	return err
}

// dfsCreated records the file or directory a Path - Create made.
func (s *Service) dfsCreated(tx kv.Tx, c Call, fs ns.FS, path string, n *ns.Node) error {
	if n != nil && n.Dir {
		return s.dfsChanged(tx, c, fs, path, n, changelog.DirectoryCreated, apiCreateDirectory, nil)
	}
	return s.dfsChanged(tx, c, fs, path, n, changelog.BlobCreated, apiCreateFile, nil)
}

// dfsFlushed records a flush with close=true that committed the file's
// content from offset from.
func (s *Service) dfsFlushed(tx kv.Tx, c Call, p PathRef, n *ns.Node, from int64) error {
	return s.dfsChanged(tx, c, p.fs(), p.Path, n, changelog.BlobCreated, apiFlushWithClose, func(r *changelog.Record) {
		// data.contentOffset: where the data this flush committed
		// begins (inferred: the schema describes it only as the offset
		// of the write that raised the event).
		r.Data.ContentOffset = from
	})
}

// dfsRenamed records the move of srcFS/src to path in fs.
func (s *Service) dfsRenamed(tx kv.Tx, c Call, fs ns.FS, path, srcFS, src string, n *ns.Node) error {
	typ, api := changelog.BlobRenamed, apiRenameFile
	if n != nil && n.Dir {
		typ, api = changelog.DirectoryRenamed, apiRenameDirectory
	}
	return s.dfsChanged(tx, c, fs, path, n, typ, api, func(r *changelog.Record) {
		r.Data.SourcePath = "/" + srcFS + "/" + strings.TrimPrefix(src, "/")
	})
}

// dfsDeleted records the delete of path in fs (n: the node deleted).
func (s *Service) dfsDeleted(tx kv.Tx, c Call, fs ns.FS, path string, n *ns.Node, recursive bool) error {
	if n != nil && n.Dir {
		return s.dfsChanged(tx, c, fs, path, n, changelog.DirectoryDeleted, apiDeleteDirectory, func(r *changelog.Record) {
			r.Data.Recursive = recursive
		})
	}
	return s.dfsChanged(tx, c, fs, path, n, changelog.BlobDeleted, apiDeleteFile, nil)
}
