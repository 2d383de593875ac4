package extent

import (
	"fmt"
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ShiftGrace moves the collection of every data item not yet due at now
// (the server's time) later by by, in tx. Clock control calls it in the
// transaction that advances the server's clock by by: GCGrace stands for
// real time (a download on another front end that resolved its parts
// before the release has that long to publish its pin), which a jump of
// the clock must not cut short.
func ShiftGrace(tx kv.Tx, now time.Time, by time.Duration) error {
	start := kv.AppendPartial(kv.Key("g"), fmt.Sprintf("%020d", now.UnixNano()+1))
	var keys [][]byte
	var due []time.Time
	var ids []string
	// Collected first, moved after: a key moved ahead of the cursor would
	// be visited again.
	err := tx.Scan(start, kv.PrefixEnd(kv.Key("g")), 0, false, func(k, _ []byte) bool {
		parts, ok := kv.Split(k)
		if !ok || len(parts) != 3 {
			return true
		}
		var ns int64
		if _, err := fmt.Sscanf(parts[1], "%d", &ns); err != nil {
			return true
		}
		keys = append(keys, append([]byte(nil), k...))
		due = append(due, time.Unix(0, ns))
		ids = append(ids, parts[2])
		return true
	})
	if err != nil {
		return err
	}
	for i, k := range keys {
		if err := tx.Delete(k); err != nil {
			return err
		}
		if err := tx.Put(gcKey(due[i].Add(by), ids[i]), nil); err != nil {
			return err
		}
	}
	return nil
}
