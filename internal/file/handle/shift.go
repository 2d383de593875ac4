package handle

import (
	"time"

	json "github.com/goccy/go-json"

	"github.com/cerulean-storage/cerulean/internal/kv"
)

// ShiftOwners extends, in tx, the heartbeat of every owner alive at now
// (the server's time) by by. Clock control calls it in the transaction
// that advances the server's clock by by: a heartbeat's lease stands for
// real time (how long a front end may go silent before its handles are
// taken for dead), which a jump of the clock must not end. Owners already
// dead at now stay dead.
func ShiftOwners(tx kv.Tx, now time.Time, by time.Duration) error {
	prefix := kv.Key(pfxOwner)
	type rec struct {
		key []byte
		r   ownerRecord
	}
	var live []rec
	var bad error
	err := tx.Scan(prefix, kv.PrefixEnd(prefix), 0, false, func(k, v []byte) bool {
		var r ownerRecord
		if err := json.Unmarshal(v, &r); err != nil {
			bad = err
			return false
		}
		if now.Before(r.Until) {
			live = append(live, rec{append([]byte(nil), k...), r})
		}
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return err
	}
	for _, l := range live {
		l.r.Until = l.r.Until.Add(by)
		val, err := json.Marshal(l.r)
		if err != nil {
			return err
		}
		if err := tx.Put(l.key, val); err != nil {
			return err
		}
	}
	return nil
}
