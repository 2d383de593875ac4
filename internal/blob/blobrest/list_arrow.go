package blobrest

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/blob"
	"github.com/cerulean-storage/cerulean/internal/server"
	"github.com/cerulean-storage/cerulean/internal/wire"
	"github.com/cerulean-storage/cerulean/internal/wire/arrowipc"
)

// arrowListVersion is the first x-ms-version whose List Blobs may answer
// in Arrow: azblob's CHANGELOG adds StorageResponseFormat in 1.8.1-beta.1,
// whose other features there are of service version 2026-10-06 (v1.8.3
// sends 2026-12-06). An older version gets the XML it always had
// (inferred: Azure adds response formats by version).
const arrowListVersion = "2026-10-06"

// wantsArrow reports whether List Blobs answers r as an Arrow IPC stream:
// its Accept offers application/vnd.apache.arrow.stream, its version
// knows the format, and the account is flat. azblob's
// StorageResponseFormatArrow says Arrow is served "only on non-HNS
// (hierarchical namespace) accounts via the Blob endpoint" and the
// service "otherwise falls back to XML"; the SDK sends
// "application/vnd.apache.arrow.stream,application/xml" and reads either.
func (s *Service) wantsArrow(r *req) bool {
	return r.Version >= arrowListVersion && arrowipc.Accepts(wire.Field(r.Header, "Accept")) && !s.Hierarchical(r.Account)
}

// arrowBlobPrefix is the ResourceType of a BlobPrefix row: in Arrow every
// row has the same columns, and azblob's HandleHierarchyListResponse
// tells prefixes from blobs by this value.
const arrowBlobPrefix = "blobprefix"

// arrowListing holds the columns of an Arrow List Blobs response. The
// names and types are those azblob v1.8.3 (internal/arrow/arrow.go)
// resolves; each cell is null exactly where the XML listing leaves the
// element out, and holds what the element holds otherwise, so the SDK
// builds the same BlobItem from either format.
type arrowListing struct {
	name, snapshot                                         *arrowipc.Strings
	deleted                                                *arrowipc.Bools
	metadata, tags                                         *arrowipc.StringMaps
	created, modified                                      *arrowipc.Ints
	etag                                                   *arrowipc.Strings
	size                                                   *arrowipc.Ints
	ctype, cenc, clang, cdisp, cctl, cmd5, btype           *arrowipc.Strings
	tier                                                   *arrowipc.Strings
	tierInferred                                           *arrowipc.Bools
	tierChanged                                            *arrowipc.Ints
	leaseState, leaseStatus, leaseDuration                 *arrowipc.Strings
	serverEnc                                              *arrowipc.Bools
	cpk                                                    *arrowipc.Strings
	sealed                                                 *arrowipc.Bools
	copyID, copyStatus, copySource, copyProgress           *arrowipc.Strings
	copyDone, deletedTime, remainingDays, tagCount, seqNum *arrowipc.Ints
	resourceType                                           *arrowipc.Strings
	cols                                                   []arrowipc.Column
}

func newArrowListing(inc map[string]bool) *arrowListing {
	a := &arrowListing{
		name: arrowipc.NewStrings("Name"), deleted: arrowipc.NewBools("Deleted"), snapshot: arrowipc.NewStrings("Snapshot"),
		created: arrowipc.NewTimestamps("Creation-Time"), modified: arrowipc.NewTimestamps("Last-Modified"),
		etag: arrowipc.NewStrings("Etag"), size: arrowipc.NewInt64s("Content-Length"),
		ctype: arrowipc.NewStrings("Content-Type"), cenc: arrowipc.NewStrings("Content-Encoding"),
		clang: arrowipc.NewStrings("Content-Language"), cdisp: arrowipc.NewStrings("Content-Disposition"),
		cctl: arrowipc.NewStrings("Cache-Control"), cmd5: arrowipc.NewStrings("Content-MD5"),
		btype: arrowipc.NewStrings("BlobType"), tier: arrowipc.NewStrings("AccessTier"),
		tierInferred: arrowipc.NewBools("AccessTierInferred"), tierChanged: arrowipc.NewTimestamps("AccessTierChangeTime"),
		leaseState: arrowipc.NewStrings("LeaseState"), leaseStatus: arrowipc.NewStrings("LeaseStatus"),
		leaseDuration: arrowipc.NewStrings("LeaseDuration"), serverEnc: arrowipc.NewBools("ServerEncrypted"),
		cpk: arrowipc.NewStrings("CustomerProvidedKeySha256"), sealed: arrowipc.NewBools("Sealed"),
		copyID: arrowipc.NewStrings("CopyId"), copyStatus: arrowipc.NewStrings("CopyStatus"),
		copySource: arrowipc.NewStrings("CopySource"), copyProgress: arrowipc.NewStrings("CopyProgress"),
		copyDone: arrowipc.NewTimestamps("CopyCompletionTime"), deletedTime: arrowipc.NewTimestamps("DeletedTime"),
		remainingDays: arrowipc.NewInt32s("RemainingRetentionDays"), tagCount: arrowipc.NewInt32s("TagCount"),
		seqNum: arrowipc.NewInt64s("x-ms-blob-sequence-number"), resourceType: arrowipc.NewStrings("ResourceType"),
	}
	a.cols = []arrowipc.Column{a.name, a.deleted, a.snapshot}
	if inc["metadata"] {
		a.metadata = arrowipc.NewStringMaps("Metadata")
		a.cols = append(a.cols, a.metadata)
	}
	if inc["tags"] {
		a.tags = arrowipc.NewStringMaps("Tags")
		a.cols = append(a.cols, a.tags)
	}
	a.cols = append(a.cols, a.created, a.modified, a.etag, a.size, a.ctype, a.cenc, a.clang, a.cdisp, a.cctl, a.cmd5,
		a.btype, a.tier, a.tierInferred, a.tierChanged, a.leaseState, a.leaseStatus, a.leaseDuration, a.serverEnc, a.cpk,
		a.sealed, a.copyID, a.copyStatus, a.copySource, a.copyProgress, a.copyDone, a.deletedTime, a.remainingDays,
		a.tagCount, a.seqNum, a.resourceType)
	return a
}

// addRow adds one row: name and the values set by fill, every other
// column null. fill appends to some columns; the rest get a null.
func (a *arrowListing) addRow(fill func()) {
	n := a.name.Len()
	fill()
	for _, c := range a.cols {
		if c.Len() == n {
			switch c := c.(type) {
			case *arrowipc.Strings:
				c.AppendNull()
			case *arrowipc.Bools:
				c.AppendNull()
			case *arrowipc.Ints:
				c.AppendNull()
			case *arrowipc.StringMaps:
				c.AppendNull()
			}
		}
	}
}

// addPrefix adds a BlobPrefix row.
func (a *arrowListing) addPrefix(name string) {
	a.addRow(func() {
		a.name.Append(name)
		a.resourceType.Append(arrowBlobPrefix)
	})
}

// addUncommitted adds a blob that has uncommitted blocks only, with the
// elements the XML listing gives it.
func (a *arrowListing) addUncommitted(name string) {
	a.addRow(func() {
		a.name.Append(name)
		a.etag.Append("")
		a.size.Append(0)
		for _, c := range []*arrowipc.Strings{a.ctype, a.cenc, a.clang, a.cdisp, a.cctl, a.cmd5} {
			c.Append("")
		}
		a.btype.Append(blob.BlockBlob)
		a.serverEnc.Append(true)
	})
}

// addBlob adds a listed blob as renderBlobItem renders it in XML.
func (a *arrowListing) addBlob(e *blob.ListedBlob, inc map[string]bool) {
	a.addRow(func() {
		b := &e.Properties
		a.name.Append(e.Name)
		a.snapshot.AppendOrNull(e.Snapshot)
		a.created.AppendTime(b.CreationTime)
		a.modified.AppendTime(b.LastModified)
		a.etag.Append(strings.Trim(b.ETag, `"`))
		a.size.Append(b.Size)
		h := &b.HTTPHeaders
		a.ctype.Append(h.ContentType)
		a.cenc.Append(h.ContentEncoding)
		a.clang.Append(h.ContentLanguage)
		a.cdisp.Append(h.ContentDisposition)
		a.cctl.Append(h.CacheControl)
		if h.ContentMD5 != nil {
			a.cmd5.Append(base64.StdEncoding.EncodeToString(h.ContentMD5))
		} else {
			a.cmd5.Append("")
		}
		a.btype.Append(b.Type)
		a.serverEnc.Append(b.ServerEncrypted)
		a.cpk.AppendOrNull(b.EncryptionKeySHA256)
		switch b.Type {
		case blob.BlockBlob:
			a.tier.AppendOrNull(b.AccessTier)
			if b.AccessTierInferred {
				a.tierInferred.Append(true)
			}
			if b.AccessTierChanged != nil {
				a.tierChanged.AppendTime(*b.AccessTierChanged)
			}
		case blob.PageBlob:
			a.seqNum.Append(b.SequenceNumber)
		case blob.AppendBlob:
			a.sealed.Append(b.Sealed)
		}
		switch {
		case e.Deleted:
			a.deleted.Append(true)
			a.deletedTime.AppendTime(e.DeletedTime)
			a.remainingDays.Append(int64(e.RemainingRetentionDays))
		case b.HasLease:
			a.leaseStatus.AppendOrNull(b.Lease.Status)
			a.leaseState.AppendOrNull(b.Lease.State)
			a.leaseDuration.AppendOrNull(b.Lease.Duration)
		}
		if inc["copy"] && b.Copy != nil {
			a.copyID.AppendOrNull(b.Copy.ID)
			a.copyStatus.AppendOrNull(b.Copy.Status)
			a.copySource.AppendOrNull(b.Copy.Source)
			a.copyProgress.AppendOrNull(b.Copy.Progress)
			a.copyDone.AppendTime(b.Copy.Completion)
		}
		if a.metadata != nil && len(b.Metadata) > 0 {
			keys := make([]string, 0, len(b.Metadata))
			for k := range b.Metadata {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			pairs := make([]arrowipc.KV, len(keys))
			for i, k := range keys {
				pairs[i] = arrowipc.KV{Key: k, Value: b.Metadata[k]}
			}
			a.metadata.Append(pairs)
		}
		if a.tags != nil && len(e.Tags) > 0 {
			var pairs []arrowipc.KV
			for _, k := range e.Tags.Keys() {
				pairs = append(pairs, arrowipc.KV{Key: k, Value: e.Tags[k]})
			}
			a.tags.Append(pairs)
		}
		if b.TagCount != 0 {
			a.tagCount.Append(int64(b.TagCount))
		}
	})
}

// arrowEndBefore applies endBefore, the Arrow listing's exclusive upper
// bound ("ending the listing when all results before have been
// returned"; only supported with the Arrow response format, the .NET
// SDK's GetBlobsOptions.EndBefore and azblob's ListBlobsFlatOptions say):
// entries from the first name at or past it are dropped, and the page
// is then the last. A page is in name order, so everything after that
// entry is past the bound too.
func arrowEndBefore(list *blob.ListBlobsOutput, endBefore string) {
	if endBefore == "" {
		return
	}
	for i := range list.Items {
		if list.Items[i].Name >= endBefore {
			list.Items, list.NextMarker = list.Items[:i], ""
			return
		}
	}
}

// arrowPage is a List Blobs page as an Arrow IPC stream. The
// schema's metadata carries NextMarker ("" on the last page) and
// NumberOfRecords, the two keys azblob reads (readSchemaMetadata).
func arrowPage(list blob.ListBlobsOutput, inc map[string]bool) (server.Response, error) {
	a := newArrowListing(inc)
	for i := range list.Items {
		e := &list.Items[i]
		switch {
		case e.IsPrefix:
			a.addPrefix(e.Name)
		case e.Uncommitted:
			a.addUncommitted(e.Name)
		default:
			a.addBlob(e, inc)
		}
	}
	var body bytes.Buffer
	md := []arrowipc.KV{{Key: "NextMarker", Value: list.NextMarker}, {Key: "NumberOfRecords", Value: strconv.Itoa(len(list.Items))}}
	if err := arrowipc.Write(&body, md, a.cols...); err != nil {
		return server.Response{}, err
	}
	return server.Response{Status: http.StatusOK, Body: body.Bytes(), ContentType: arrowipc.ContentType}, nil
}
