package table

import (
	"time"

	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// scanBudget bounds the wall time one query page may spend scanning, as
// Azure does (5 seconds): past it the page ends early with a
// continuation, possibly with no results.
const scanBudget = 5 * time.Second

// scanBounds narrows the scan of a table to the key ranges the filter
// allows. Bounds are inclusive supersets; the filter decides exactly.
func scanBounds(prefix []byte, f *odata.Filter) (start, end []byte, empty bool) {
	start, end = prefix, kv.PrefixEnd(prefix)
	if f == nil {
		return start, end, false
	}
	pr := f.KeyRange("PartitionKey")
	if pr.Empty {
		return nil, nil, true
	}
	if pk, ok := pr.Exact(); ok {
		part := kv.AppendComponent(append([]byte(nil), prefix...), pk)
		start, end = part, kv.PrefixEnd(part)
		rr := f.KeyRange("RowKey")
		if rr.Empty {
			return nil, nil, true
		}
		if rr.HasLo {
			start = kv.AppendComponent(append([]byte(nil), part...), rr.Lo)
		}
		if rr.HasHi {
			// The smallest key after the entity key of Hi.
			end = append(kv.AppendComponent(append([]byte(nil), part...), rr.Hi), 0)
		}
		return start, end, false
	}
	if pr.HasLo {
		start = kv.AppendComponent(append([]byte(nil), prefix...), pr.Lo)
	}
	if pr.HasHi {
		end = kv.PrefixEnd(kv.AppendComponent(append([]byte(nil), prefix...), pr.Hi))
	}
	return start, end, false
}
