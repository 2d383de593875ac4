package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
	"github.com/cerulean-storage/cerulean/internal/hns/ns"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// The change feed's hook into the Blob domain. An account with the feed
// on (SetChangeFeed) has every committed change of its blobs appended to
// its change log (internal/changelog) in the transaction that makes the
// change, so a failed or rolled-back write records nothing and a
// committed one is recorded exactly once. Each write path names its
// change with one call: changing wraps the write's transaction function,
// snapshotTaken the write of a snapshot. Accounts with the feed off pay
// nothing (changing returns the function unwrapped).
//
// Hierarchical accounts are not hooked: Azure's change feed does not
// support accounts with a hierarchical namespace.

// ChangeFeedContainer is the container the change feed is served in.
const ChangeFeedContainer = "$blobchangefeed"

// SetChangeFeed turns the change feed on for the accounts on reports
// (nil: for none). Call it before the service answers requests.
func (s *Service) SetChangeFeed(on func(account string) bool) { s.feed = on }

// SetChangeFeedRetention keeps the change log's records for d (0, the
// default: for ever), as the change feed's retention period
// (retentionInDays, a management-plane setting of the account on Azure):
// CollectGarbage removes whole hourly segments older than that, oldest
// first, so the feed then starts later. Call it before the service
// answers requests.
func (s *Service) SetChangeFeedRetention(d time.Duration) { s.feedRetention = d }

// trimBatch bounds the records one transaction of trimChangeLogs removes.
const trimBatch = 256

// trimChangeLogs removes the change log records past their retention, in
// bounded transactions, and returns how many it removed.
func (s *Service) trimChangeLogs(ctx context.Context) (int, error) {
	if s.feedRetention <= 0 {
		return 0, nil
	}
	cutoff := s.clock.Now().Add(-s.feedRetention)
	var accts []string
	if err := s.store.View(ctx, func(tx kv.Tx) (err error) {
		accts, err = changelog.Accounts(tx)
		return err
	}); err != nil {
		return 0, err
	}
	total := 0
	for _, a := range accts {
		for ctx.Err() == nil {
			var n int
			if err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
				n, err = changelog.Trim(tx, a, cutoff, trimBatch)
				return err
			}); err != nil {
				return total, err
			}
			total += n
			if n == 0 {
				break
			}
		}
	}
	return total, ctx.Err()
}

// ChangeFeedOn reports whether account has the change feed on: never
// for a hierarchical account, which Azure's change feed does not
// support (its log holds Data Lake event records, hns_events.go).
func (s *Service) ChangeFeedOn(account string) bool {
	return s.feed != nil && s.feed(account) && !s.Hierarchical(account)
}

// SetChangeLog turns the change log on for the accounts on reports (nil:
// none) without serving their change feed: event subscriptions
// (internal/events) read the log. Call it before the service answers
// requests.
func (s *Service) SetChangeLog(on func(account string) bool) { s.logged = on }

// SetAppended has f told of each record appended to an account's log,
// from inside the appending transaction, before it commits: f must not
// block, and a reader it wakes may find the record not yet visible for
// a moment (the event deliverer looks again shortly, then falls back to
// polling). Call it before the service answers requests.
func (s *Service) SetAppended(f func(account string)) { s.appended = f }

// logging reports whether account's changes are appended to its log:
// its change feed or something else reading the log is on.
func (s *Service) logging(account string) bool {
	return s.ChangeFeedOn(account) || (s.logged != nil && s.logged(account))
}

// The operations changing records, by the data.api the feed names them
// with.
const (
	apiPutBlob           = "PutBlob"
	apiPutBlockList      = "PutBlockList"
	apiCopyBlob          = "CopyBlob"
	apiPutBlobFromURL    = "PutBlobFromURL"
	apiDeleteBlob        = "DeleteBlob"
	apiSetBlobProperties = "SetBlobProperties"
	apiSetBlobMetadata   = "SetBlobMetadata"
	apiSetBlobTier       = "SetBlobTier"
	apiUndeleteBlob      = "UndeleteBlob"
	apiSnapshotBlob      = "SnapshotBlob"
)

// changing wraps fn, the transaction of a write of call c named api on
// ref, so that when fn succeeds the change it made is appended to the
// account's log in the same transaction. It records what the blob before
// and after fn differ by (changeOf): nothing when the write left the
// blob as it was (a delete of snapshots only, an undelete with nothing to
// restore). Neither is read again where the write itself read or stored
// it (changeTx); the before-state is not needed for the writes that
// create a blob.
func (s *Service) changing(c Call, api string, ref BlobRef, fn func(tx kv.Tx) error) func(tx kv.Tx) error {
	if !s.logging(ref.Account) || ref.Container == ChangeFeedContainer {
		return fn
	}
	now := s.now(c)
	creates := api == apiPutBlob || api == apiPutBlockList || api == apiCopyBlob || api == apiPutBlobFromURL
	return func(tx kv.Tx) error {
		ct := &changeTx{Tx: tx, ref: ref, key: BlobKey(ref.Account, ref.Container, ref.Blob, ref.Snapshot), wantBefore: !creates}
		var viewed *blobRec // verifyChangeTx: the before-state read as before handing it over
		if verifyChangeTx && !creates {
			var err error
			if viewed, err = changeView(tx, ref); err != nil {
				return err
			}
		}
		if err := fn(ct); err != nil {
			return err
		}
		before, err := ct.beforeWrite()
		if err != nil {
			return err
		}
		after, err := ct.after()
		if err != nil {
			return err
		}
		r, ok := changeOf(api, ref, before, after)
		if verifyChangeTx {
			if err := ct.verify(api, ref, viewed, r, ok); err != nil {
				return err
			}
		}
		if !ok {
			return nil
		}
		return s.appendChange(tx, c, ref, now, r)
	}
}

// changeTx is the transaction a logged write runs in: it notes what the
// write did to the blob's key, so that the record of the blob after the
// write is the one the write stored (kv.PutObserver) rather than decoded
// again from the bytes just encoded, and the record before it the one
// the write read (kv.GetObserver) rather than read again. A write that
// stored the key's bytes some other way leaves it to be read back; one
// that did not read the key with kv.GetJSON has it read just before its
// first write of it (Put, Delete), or after the write when it left the
// key alone.
type changeTx struct {
	kv.Tx
	ref   BlobRef
	key   []byte
	state changeState
	rec   blobRec
	// wantBefore: the record needs the blob before the write; once
	// haveBefore, before is it (nil: none).
	wantBefore, haveBefore bool
	before                 *blobRec
}

type changeState uint8

const (
	keyUntouched changeState = iota // not written: read it back
	keyStored                       // rec is what was stored
	keyDeleted                      // deleted: no blob after the write
	keyRaw                          // stored as bytes: read it back
)

func (t *changeTx) Put(k, v []byte) error {
	if bytes.Equal(k, t.key) {
		if err := t.keepBefore(); err != nil {
			return err
		}
		t.state = keyRaw
	}
	return t.Tx.Put(k, v)
}

func (t *changeTx) Delete(k []byte) error {
	if bytes.Equal(k, t.key) {
		if err := t.keepBefore(); err != nil {
			return err
		}
		t.state = keyDeleted
	}
	return t.Tx.Delete(k)
}

// keepBefore reads the blob before the write's first change of its key,
// unless the write read it already.
func (t *changeTx) keepBefore() error {
	if !t.wantBefore || t.haveBefore {
		return nil
	}
	b, err := changeView(t.Tx, t.ref)
	if err != nil {
		return err
	}
	t.before, t.haveBefore = b, true
	return nil
}

// ObserveGet implements kv.GetObserver: the blob as the write read it,
// before it changed it, is the before-state.
func (t *changeTx) ObserveGet(k []byte, v any) {
	if !t.wantBefore || t.haveBefore || t.state != keyUntouched || !bytes.Equal(k, t.key) {
		return
	}
	switch b := v.(type) {
	case nil:
		t.before, t.haveBefore = nil, true
	case *blobRec:
		// A copy of its own (not a field of changeTx: the writes that
		// create a blob, most of them, need no before-state).
		before := *b
		t.before, t.haveBefore = &before, true
	}
}

// ObservePut implements kv.PutObserver.
func (t *changeTx) ObservePut(k []byte, v any) {
	if b, ok := v.(*blobRec); ok && bytes.Equal(k, t.key) {
		t.rec, t.state = *b, keyStored
	}
}

// beforeWrite is the blob's record before the write (nil: none; and nil
// when the record does not need it). A write that neither read nor
// changed the key has it read now, unchanged, and it is also the
// after-state.
func (t *changeTx) beforeWrite() (*blobRec, error) {
	if !t.wantBefore || t.haveBefore {
		return t.before, nil
	}
	b, err := changeView(t.Tx, t.ref)
	if err != nil {
		return nil, err
	}
	t.before, t.haveBefore = b, true
	if t.state == keyUntouched {
		// Unchanged: the after-state is the same (keyDeleted: no blob).
		if b == nil {
			t.state = keyDeleted
		} else {
			t.rec, t.state = *b, keyStored
		}
	}
	return b, nil
}

// Prefetch and PrefetchRanges pass the hints on (kv.Prefetcher,
// kv.RangePrefetcher), which the wrapper would otherwise hide.
func (t *changeTx) Prefetch(keys ...[]byte) error { return kv.Prefetch(t.Tx, keys...) }

func (t *changeTx) PrefetchRanges(limit int, ranges ...kv.Range) error {
	return kv.PrefetchRanges(t.Tx, limit, ranges...)
}

// after is the blob's record after the write (nil: none).
func (t *changeTx) after() (*blobRec, error) {
	switch t.state {
	case keyStored:
		return &t.rec, nil
	case keyDeleted:
		return nil, nil
	}
	return changeView(t.Tx, t.ref)
}

// verifyChangeTx makes every logged write also read the blob before the
// write and back after it, and check that the record it made from what
// the write read and stored is the one the stored bytes give (set by
// tests: VerifyChangeRecords). Off, it costs a logged write one test of
// a variable.
var verifyChangeTx bool

// VerifyChangeRecords makes every logged write of the process check its
// change record against the blob read from the store before and after
// the write, failing the write on a difference. For tests: call it before any service starts.
func VerifyChangeRecords() { verifyChangeTx = true }

// verify checks the record got (gotOK: one was made) against the one the
// blob as read before the write (viewed) and as stored after it give.
func (t *changeTx) verify(api string, ref BlobRef, viewed *blobRec, got changelog.Record, gotOK bool) error {
	stored, err := changeView(t.Tx, ref)
	if err != nil {
		return err
	}
	want, wantOK := changeOf(api, ref, viewed, stored)
	if gotOK != wantOK || !reflect.DeepEqual(got, want) {
		return fmt.Errorf("blob: change of %s on %v: from the write %v %+v, from the store %v %+v", api, ref, gotOK, got, wantOK, want)
	}
	return nil
}

// changeView reads the blob record at ref (nil when there is none) for
// changeOf, without its content's parts and block list: a record embeds up
// to 64 KiB of a small blob's data, which a change record never needs, and
// decoding it was most of the feed's cost per write. The write it wraps
// has read the container already.
func changeView(tx kv.Tx, ref BlobRef) (*blobRec, error) {
	var v contentless
	ok, err := kv.GetJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ref.Snapshot), &v)
	if err != nil || !ok {
		return nil, err
	}
	return &v.blobRec, nil
}

// contentless is a blob record read without its parts and block list
// (changeView), in either stored form.
type contentless struct {
	blobRec
	Parts  skipJSON `json:"x,omitempty"`
	Blocks skipJSON `json:"b,omitempty"`
}

// DecodeRecord implements kv.Decoder, skipping the content.
func (v *contentless) DecodeRecord(raw []byte) error { return v.decode(raw, true) }

// skipJSON is a JSON value decoded to nothing.
type skipJSON struct{}

// UnmarshalJSON implements json.Unmarshaler by ignoring the value.
func (*skipJSON) UnmarshalJSON([]byte) error { return nil }

// snapshotTaken records the snapshot snap of ref taken by call c once
// err (the snapshot's write) is nil, and returns err otherwise.
func (s *Service) snapshotTaken(tx kv.Tx, err error, c Call, ref BlobRef, snap string, b *blobRec) error {
	if err != nil || !s.logging(ref.Account) {
		return err
	}
	r := recordOf(changelog.BlobSnapshotCreated, apiSnapshotBlob, b)
	r.Data.Snapshot = snap
	return s.appendChange(tx, c, ref, s.now(c), r)
}

// appendChange completes r with what the call and the blob's name give
// and appends it to the account's log.
func (s *Service) appendChange(tx kv.Tx, c Call, ref BlobRef, now time.Time, r changelog.Record) error {
	r.Subject = changelog.Subject(ref.Container, ref.Blob)
	r.EventTime = now
	r.Data.RequestID, r.Data.ClientRequestID = c.RequestID, c.ClientRequestID
	if ref.Snapshot != "" && r.Data.Snapshot == "" {
		r.Data.Snapshot = ref.Snapshot
	}
	_, err := changelog.Append(tx, ref.Account, r)
	if err == nil && s.appended != nil {
		s.appended(ref.Account)
	}
	return err
}

// changeOf is the record of write api given the blob before and after
// it (nil: none), and false when the write changed nothing to record.
func changeOf(api string, ref BlobRef, before, after *blobRec) (changelog.Record, bool) {
	switch api {
	case apiPutBlob, apiPutBlockList, apiCopyBlob, apiPutBlobFromURL:
		if after == nil {
			return changelog.Record{}, false
		}
		return recordOf(changelog.BlobCreated, api, after), true
	case apiUndeleteBlob:
		// Undelete makes a soft-deleted blob live again: a blob created
		// under its name, with its old content.
		if after == nil || before != nil {
			return changelog.Record{}, false
		}
		return recordOf(changelog.BlobCreated, api, after), true
	case apiDeleteBlob:
		if before == nil || after != nil {
			return changelog.Record{}, false
		}
		return recordOf(changelog.BlobDeleted, api, before), true
	case apiSetBlobProperties, apiSetBlobMetadata:
		if before == nil || after == nil {
			return changelog.Record{}, false
		}
		r := recordOf(changelog.BlobPropertiesUpdated, api, after)
		if api == apiSetBlobProperties {
			r.Data.UpdatedBlobProperties = propertyChanges(before.Props, after.Props)
		} else {
			r.Data.UpdatedBlobMetadata = after.Meta
		}
		return r, true
	case apiSetBlobTier:
		if before == nil || after == nil {
			return changelog.Record{}, false
		}
		r := recordOf(changelog.BlobTierChanged, api, after)
		prev, _ := before.tier()
		r.Data.PreviousInfo = &changelog.PreviousInfo{PreviousTier: prev}
		return r, true
	}
	return changelog.Record{}, false
}

// recordOf is a record of event typ by api describing blob b.
func recordOf(typ, api string, b *blobRec) changelog.Record {
	r := changelog.Record{EventType: typ, Data: changelog.Data{
		API: api, ETag: strings.Trim(b.ETag, `"`), ContentType: b.Props.ContentType,
		ContentLength: b.Size, BlobType: b.Type,
	}}
	if b.Type == BlockBlob {
		r.Data.BlobAccessTier, _ = b.tier()
	}
	if b.Copy != nil && api == apiCopyBlob {
		r.Data.SourceURL = b.Copy.Source
	}
	return r
}

// propertyChanges are the content properties that differ between a and
// b, by their header names, as the feed's updatedBlobProperties.
func propertyChanges(a, b HTTPHeaders) map[string]changelog.PropertyChange {
	out := map[string]changelog.PropertyChange{}
	add := func(name, x, y string) {
		if x != y {
			out[name] = changelog.PropertyChange{Previous: x, Current: y}
		}
	}
	add("ContentType", a.ContentType, b.ContentType)
	add("ContentEncoding", a.ContentEncoding, b.ContentEncoding)
	add("ContentLanguage", a.ContentLanguage, b.ContentLanguage)
	add("ContentDisposition", a.ContentDisposition, b.ContentDisposition)
	add("CacheControl", a.CacheControl, b.CacheControl)
	add("ContentMD5", base64.StdEncoding.EncodeToString(a.ContentMD5), base64.StdEncoding.EncodeToString(b.ContentMD5))
	if len(out) == 0 {
		return nil
	}
	return out
}

// updateBlobAs is updateBlob for write api of call c: the change is
// recorded (changing).
func (s *Service) updateBlobAs(ctx context.Context, c Call, api string, ref BlobRef, a Access, op wormOp, now time.Time, fn func(tx kv.Tx, b *blobRec) error) (*blobRec, error) {
	var out *blobRec
	err := s.store.Update(ctx, s.changing(c, api, ref, func(tx kv.Tx) (err error) {
		out, err = updateBlobTx(tx, ref, a, op, now, fn)
		return err
	}))
	return out, err
}

// blobWritten records b, written at ref by write api of call c, as
// created once err (the write's) is nil, and returns err otherwise.
func (s *Service) blobWritten(tx kv.Tx, err error, c Call, api string, ref BlobRef, b *blobRec) error {
	if err != nil || !s.logging(ref.Account) || ref.Container == ChangeFeedContainer {
		return err
	}
	return s.appendChange(tx, c, ref, s.now(c), recordOf(changelog.BlobCreated, api, b))
}

// Hierarchical reports whether account has a hierarchical namespace
// (SetNamespace), whose paths the Blob operations resolve through it.
func (s *Service) Hierarchical(account string) bool { return s.nsOf(account) != nil }

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
