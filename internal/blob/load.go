// Reading and writing the stored records every rule above starts from: a
// blob (current, snapshot or version), a container, and a version's key.
// No check is made here; the callers decide what a record they found
// means.

package blob

import (
	"errors"
	"sync"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
)

// findBlobIn is findBlob that also returns the container's record as
// stored when it found the blob (its WORM settings: wormFrom).
func findBlobIn(tx kv.Tx, acct, c, name, snap string) (*blobRec, []byte, error) {
	ckey := ContainerKey(acct, c)
	if kv.Prefetches(tx) { // the keys' slice is made only for a store that reads ahead
		if err := kv.Prefetch(tx, ckey, BlobKey(acct, c, name, snap)); err != nil {
			return nil, nil, err
		}
	}
	b, err := loadBlobRec(tx, acct, c, name, snap)
	if b == nil || err != nil {
		return nil, nil, err
	}
	crec, err := tx.Get(ckey)
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	return b, crec, nil
}

// loadBlobRec reads and decodes the blob's record, or nil, without
// checking that its container's record exists (findBlob does): for a
// caller that has just read the container's record in tx. It keeps the
// bytes (b.raw); kv.GetDecoded tells a kv.GetObserver what was read (a
// logged write's before-state, domain_changes.go).
func loadBlobRec(tx kv.Tx, acct, c, name, snap string) (*blobRec, error) {
	key := BlobKey(acct, c, name, snap)
	b := new(blobRec)
	ok, err := kv.GetDecoded(tx, key, b, func(raw []byte) error {
		if err := kv.DecodeJSON(key, raw, b); err != nil {
			return err
		}
		b.raw = raw
		return nil
	})
	if !ok || err != nil {
		return nil, err
	}
	return b, nil
}

// findBlob returns the record or nil. A record whose container record
// is gone belongs to a deleted container still being reclaimed
// (container_reclaim.go): it is gone too.
func findBlob(tx kv.Tx, acct, c, name, snap string) (*blobRec, error) {
	b, _, err := findBlobIn(tx, acct, c, name, snap)
	return b, err
}

// loadBlob reads the addressed blob (or snapshot). A missing blob is
// 404 BlobNotFound, or ContainerNotFound when its container is missing.
func loadBlob(tx kv.Tx, ref BlobRef) (*blobRec, error) {
	if ref.VersionID != "" {
		return loadVersion(tx, ref)
	}
	b, err := findBlob(tx, ref.Account, ref.Container, ref.Blob, ref.Snapshot)
	return foundOrMissing(tx, ref, b, err)
}

// foundOrMissing is a lookup's answer for ref: b, or when nothing was
// found 404 BlobNotFound, or ContainerNotFound when the container is
// missing too.
func foundOrMissing(tx kv.Tx, ref BlobRef, b *blobRec, err error) (*blobRec, error) {
	if err != nil {
		return nil, err
	}
	if b == nil {
		if _, err := loadContainer(tx, ref.Account, ref.Container); err != nil {
			return nil, err
		}
		return nil, azerr.New(azerr.BlobNotFound)
	}
	return b, nil
}

// loadContainer reads a container record or returns 404 ContainerNotFound.
func loadContainer(tx kv.Tx, acct, name string) (*container, error) {
	key := ContainerKey(acct, name)
	c := new(container)
	ok, err := kv.GetDecoded(tx, key, c, func(raw []byte) error { return decodeContainer(key, raw, c) })
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, azerr.New(azerr.ContainerNotFound)
	}
	return c, nil
}

// decodeContainer decodes a container record into c. The decodings of
// the records that hold values only (no metadata, access policy or
// immutability settings: most containers) are kept, by the record's
// bytes, so a record read again (every write into the container reads
// it) is copied, not parsed again: its JSON took about 4 µs of a 1 KiB
// Put Blob's server CPU. The bytes are the whole key, so what is kept
// can never be stale: a changed record is different bytes.
func decodeContainer(key, raw []byte, c *container) error {
	containerMemo.mu.RLock()
	m, ok := containerMemo.m[string(raw)]
	containerMemo.mu.RUnlock()
	if ok {
		*c = m
		return nil
	}
	if err := kv.DecodeJSON(key, raw, c); err != nil {
		return err
	}
	if c.valuesOnly() {
		containerMemo.mu.Lock()
		if len(containerMemo.m) >= containerMemoMax {
			clear(containerMemo.m) // the next reads fill it again
		}
		containerMemo.m[string(raw)] = *c
		containerMemo.mu.Unlock()
	}
	return nil
}

// containerMemo holds decodeContainer's decodings, at most
// containerMemoMax (a few hundred bytes each).
var containerMemo = struct {
	mu sync.RWMutex
	m  map[string]container
}{m: map[string]container{}}

const containerMemoMax = 4096

// valuesOnly reports whether c holds nothing a copy of it would share
// with it: no map, slice or pointer (TestContainerValuesOnly keeps the
// list whole as fields are added).
func (c *container) valuesOnly() bool {
	return c.Meta == nil && c.ACL == nil && c.WORM == nil
}

func versionKey(acct, c, name, vid string) []byte { return kv.Key("bv", acct, c, name, vid) }

// findVersion returns version vid of the name (the base blob when it is
// the current version), or nil. current reports which.
func findVersion(tx kv.Tx, acct, c, name, vid string) (b *blobRec, current bool, err error) {
	base, err := findBlob(tx, acct, c, name, "")
	if err != nil {
		return nil, false, err
	}
	if base != nil && base.VersionID == vid {
		return base, true, nil
	}
	if _, err := tx.Get(ContainerKey(acct, c)); err != nil {
		if err == kv.ErrNotFound {
			return nil, false, nil
		}
		return nil, false, err
	}
	var v blobRec
	ok, err := kv.GetJSON(tx, versionKey(acct, c, name, vid), &v)
	if err != nil || !ok || v.Del != nil { // a soft-deleted version is not found
		return nil, false, err
	}
	v.prev = true
	return &v, false, nil
}

// loadVersion is loadBlob for a ref with a version id.
func loadVersion(tx kv.Tx, ref BlobRef) (*blobRec, error) {
	b, _, err := findVersion(tx, ref.Account, ref.Container, ref.Blob, ref.VersionID)
	return foundOrMissing(tx, ref, b, err)
}

func containerVersionsPrefix(acct, c string) []byte { return kv.Key("bv", acct, c) }

// putRec writes b back where it was read from ref: a previous version
// under "bv", else the base blob or snapshot (Set Blob Tags and Set Blob
// Tier, which may address a version).
func putRec(tx kv.Tx, ref BlobRef, b *blobRec) error {
	if b.prev {
		return kv.PutJSON(tx, versionKey(ref.Account, ref.Container, ref.Blob, b.VersionID), b)
	}
	return kv.PutJSON(tx, BlobKey(ref.Account, ref.Container, ref.Blob, ref.Snapshot), b)
}
