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

// dfsCreated records the file or directory a Path - Create made.
func (s *Service) dfsCreated(tx kv.Tx, c Call, fs ns.FS, path string, n *ns.Node) error {
	if n != nil && n.Dir {
		return s.dfsChanged(tx, c, fs, path, n, changelog.DirectoryCreated, apiCreateDirectory, nil)
	}
	return s.dfsChanged(tx, c, fs, path, n, changelog.BlobCreated, apiCreateFile, nil)
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
