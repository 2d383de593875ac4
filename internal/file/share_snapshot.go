package file

import (
	"net/http"
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/extent"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/lease"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// snapshotShare is Create Share Snapshot (PUT ?restype=share&comp=snapshot;
// SnapshotShare). Without x-ms-meta-* headers the snapshot gets the
// share's metadata, with them only theirs.
func (s *Service) snapshotShare(w http.ResponseWriter, r *req) error {
	meta, err := wire.ParseMetadata(r.Header)
	if err != nil {
		return err
	}
	out, err := s.SnapshotShare(r.Context(), SnapshotShareInput{Ref: refOf(r), Meta: meta})
	if err != nil {
		return err
	}
	setShareETag(w, out.Share)
	w.Header().Set("x-ms-snapshot", out.Snapshot)
	w.WriteHeader(http.StatusCreated)
	return nil
}

// freeSnapshotTime returns the snapshot timestamp for a snapshot taken at
// now: now at the service's 100 ns resolution, moved forward past any
// snapshot (or snapshot being purged) with the same timestamp, so
// snapshots of one share are unique even when taken in the same tick.
func freeSnapshotTime(tx kv.Tx, acct, sh string, now time.Time) (string, error) {
	t := now.UTC().Truncate(100 * time.Nanosecond)
	for {
		v := wire.FormatISO7(t)
		taken := false
		for _, k := range [][]byte{shareKey(acct, sh, v), tombstoneKey(acct, sh, v)} {
			_, err := tx.Get(k)
			if err == nil {
				taken = true
			} else if err != kv.ErrNotFound {
				return "", err
			}
		}
		if !taken {
			return v, nil
		}
		t = t.Add(100 * time.Nanosecond)
	}
}

// copyBatch bounds how many entries copyEntries holds in memory at once.
const copyBatch = 256

// copyEntries copies every entry of the live share sh, with its ID index
// record, to snapshot snap, and takes a reference on the data items of
// the copies. File leases are not copied: a snapshot's files are not
// leased.
func copyEntries(tx kv.Tx, acct, sh, snap string, now time.Time) error {
	pre := entriesPrefix(acct, sh, "")
	start, end := pre, kv.PrefixEnd(pre)
	for {
		var batch []*Entry
		var last []byte
		var derr error
		err := tx.Scan(start, end, copyBatch, false, func(k, v []byte) bool {
			last = append(last[:0], k...)
			var e Entry
			if derr = json.Unmarshal(v, &e); derr != nil {
				return false
			}
			batch = append(batch, &e)
			return true
		})
		if err == nil {
			err = derr
		}
		if err != nil {
			return err
		}
		var parts []extent.Part
		for _, e := range batch {
			e.Lease = lease.Lease{}
			if err := putEntry(tx, acct, sh, snap, e); err != nil {
				return err
			}
			parts = append(parts, e.Parts...)
		}
		if err := extent.AdjustRefs(tx, now, nil, parts); err != nil {
			return err
		}
		if len(batch) < copyBatch {
			return nil
		}
		start = append(last, 0) // just after the last key
	}
}
