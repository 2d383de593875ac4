package table

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/reclaim"
)

// purgeChunk is how many keys one purge transaction deletes, so that
// deleting a large table never holds the writer for long.
const purgeChunk = 2000

// purge deletes the entities and partition marks of generation gen of a
// table being deleted, purgeChunk keys per transaction, folding their
// timestamps into the record's Floor, and finally turns
// the record into a tombstone. It stops as soon as the record is no
// longer that generation being deleted.
func (s *Service) purge(ctx context.Context, acct, name string, gen uint64) error {
	for {
		done := false
		err := s.store.Update(ctx, func(tx kv.Tx) (err error) {
			done, err = purgeStep(tx, acct, name, gen, purgeChunk)
			return err
		})
		if err != nil {
			return err
		}
		if done {
			return nil
		}
	}
}

// purgeStep deletes up to budget entity and partition-mark keys of
// generation gen (0: whichever is being deleted) of table name in tx;
// done once the record is a tombstone (or no longer that generation
// being deleted).
func purgeStep(tx kv.Tx, acct, name string, gen uint64, budget int) (bool, error) {
	t, err := loadTable(tx, acct, name)
	if err != nil {
		return false, err
	}
	if t == nil || t.State != stateDeleting || (gen != 0 && t.Gen != gen) {
		return true, nil
	}
	for i, prefix := range [][]byte{entityPrefix(acct, name), hwmPrefix(acct, name)} {
		marks := i == 1
		var keys [][]byte
		err := tx.Scan(prefix, kv.PrefixEnd(prefix), budget, false, func(k, v []byte) bool {
			keys = append(keys, append([]byte(nil), k...))
			// Fold every timestamp (marks, and entities, whose
			// timestamp follows the format byte) into the floor.
			var ts int64
			switch {
			case marks && len(v) == 8:
				ts = int64(binary.BigEndian.Uint64(v))
			case !marks && len(v) >= 9:
				ts = int64(binary.BigEndian.Uint64(v[1:9]))
			}
			t.Floor = max(t.Floor, ts)
			return true
		})
		if err != nil {
			return false, err
		}
		for _, k := range keys {
			if err := tx.Delete(k); err != nil {
				return false, err
			}
		}
		budget -= len(keys)
		if budget <= 0 {
			return false, putTable(tx, acct, t)
		}
	}
	t.State, t.ACL = stateDeleted, nil
	return true, putTable(tx, acct, t)
}

// reclaimKindTable is the tombstone kind of a table being deleted:
// parts account, lower-cased name.
const reclaimKindTable = "table"

// SetReclaimer makes Delete Table return once the table is marked
// deleting: r purges its entities in the background, in bounded
// transactions (Delete Table: "the table is later removed from the Table
// service during garbage collection"), and Create Table of the name
// answers 409 TableBeingDeleted until it is done.
func (s *Service) SetReclaimer(r *reclaim.Reclaimer) {
	s.reclaimer = r
	r.Register(reclaimKindTable, func(tx kv.Tx, parts []string, _ []byte, _ time.Time, batch int) (bool, error) {
		if len(parts) != 2 {
			return false, fmt.Errorf("table: malformed tombstone %q", parts)
		}
		return purgeStep(tx, parts[0], parts[1], 0, batch)
	})
}

// markTableDeleting writes the reclaim tombstone of table name.
func markTableDeleting(tx kv.Tx, acct, name string) error {
	return reclaim.Mark(tx, nil, reclaimKindTable, acct, strings.ToLower(name))
}
