package table

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/policy"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// Key layout (see this package's documentation, doc.go):
//
//	tt  / account / lower(table)            table record (binary, see encodeTable)
//	t   / account / lower(table) / pk / rk  entity (binary, see encodeEntity)
//	tw  / account / lower(table) / pk       partition high-water mark (ticks)
//	tsp / account                           Table service properties (XML)
const (
	prefixTable    = "tt"
	prefixEntity   = "t"
	prefixHWM      = "tw"
	prefixSvcProps = "tsp"
)

func tableKey(acct, table string) []byte {
	return kv.Key(prefixTable, acct, strings.ToLower(table))
}

func tablesPrefix(acct string) []byte { return kv.Key(prefixTable, acct) }

// entityPrefix is the prefix of every entity of a table.
func entityPrefix(acct, table string) []byte {
	return kv.Key(prefixEntity, acct, strings.ToLower(table))
}

func partitionPrefix(acct, table, pk string) []byte {
	return kv.AppendComponent(entityPrefix(acct, table), pk)
}

func entityKey(acct, table, pk, rk string) []byte {
	return kv.AppendComponent(partitionPrefix(acct, table, pk), rk)
}

func hwmPrefix(acct, table string) []byte {
	return kv.Key(prefixHWM, acct, strings.ToLower(table))
}

func hwmKey(acct, table, pk string) []byte {
	return kv.AppendComponent(hwmPrefix(acct, table), pk)
}

func svcPropsKey(acct string) []byte { return kv.Key(prefixSvcProps, acct) }

// Table states. A deleted table keeps its record as a tombstone so that
// a table re-created under the same name never reissues an old ETag.
const (
	stateActive   = ""
	stateDeleting = "deleting"
	stateDeleted  = "deleted"
)

// tableRecord is the stored record of a table.
type tableRecord struct {
	Name    string
	Created time.Time
	ACL     []signedID
	State   string
	// Gen counts creations of this name; a purge only deletes entities
	// of the generation it started on.
	Gen uint64
	// Floor is at least every entity timestamp ever issued under this
	// name: new timestamps are strictly greater.
	Floor int64
}

// signedID is a stored access policy (one shape, with its
// stored and XML forms, for all four services).
type signedID = policy.Stored

// Stored table record, version 1: 0x01, state byte, uvarint Gen, Floor
// int64 BE, Created unix nanoseconds int64 BE, uvarint len(Name), Name,
// then the ACL as JSON (absent when empty). Binary, because every entity
// operation reads it.
const tableFormat = 1

var tableStates = []string{stateActive, stateDeleting, stateDeleted}

func encodeTable(t *tableRecord) ([]byte, error) {
	st := slices.Index(tableStates, t.State)
	if st < 0 {
		return nil, fmt.Errorf("table record %s: unknown state %q", t.Name, t.State)
	}
	b := make([]byte, 0, 32+len(t.Name))
	b = append(b, tableFormat, byte(st))
	b = binary.AppendUvarint(b, t.Gen)
	b = binary.BigEndian.AppendUint64(b, uint64(t.Floor))
	b = binary.BigEndian.AppendUint64(b, uint64(t.Created.UnixNano()))
	b = binary.AppendUvarint(b, uint64(len(t.Name)))
	b = append(b, t.Name...)
	if len(t.ACL) > 0 {
		acl, err := json.Marshal(t.ACL)
		if err != nil {
			return nil, err
		}
		b = append(b, acl...)
	}
	return b, nil
}

func decodeTable(raw []byte) (*tableRecord, error) {
	if len(raw) < 2 || raw[0] != tableFormat || int(raw[1]) >= len(tableStates) {
		return nil, errCorruptTable
	}
	t := &tableRecord{State: tableStates[raw[1]]}
	b := raw[2:]
	gen, n := binary.Uvarint(b)
	if n <= 0 || len(b)-n < 16 {
		return nil, errCorruptTable
	}
	t.Gen = gen
	b = b[n:]
	t.Floor = int64(binary.BigEndian.Uint64(b))
	t.Created = time.Unix(0, int64(binary.BigEndian.Uint64(b[8:]))).UTC()
	b = b[16:]
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return nil, errCorruptTable
	}
	t.Name = string(b[n : n+int(l)])
	if acl := b[n+int(l):]; len(acl) > 0 {
		if err := json.Unmarshal(acl, &t.ACL); err != nil {
			return nil, errCorruptTable
		}
	}
	return t, nil
}

var errCorruptTable = errors.New("table: corrupt table record")

// loadTable returns the table record, or nil when there is none.
func loadTable(tx kv.Tx, acct, table string) (*tableRecord, error) {
	raw, err := tx.Get(tableKey(acct, table))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t, err := decodeTable(raw)
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", acct, table, err)
	}
	return t, nil
}

func putTable(tx kv.Tx, acct string, t *tableRecord) error {
	raw, err := encodeTable(t)
	if err != nil {
		return err
	}
	return tx.Put(tableKey(acct, t.Name), raw)
}

// activeTable returns the record of an existing table or 404
// TableNotFound.
func activeTable(tx kv.Tx, acct, table string) (*tableRecord, error) {
	t, err := loadTable(tx, acct, table)
	if err != nil {
		return nil, err
	}
	if t == nil || t.State != stateActive {
		return nil, errTableNotFound()
	}
	return t, nil
}

// Timestamps and ETags. An entity's ETag is its timestamp, which must
// differ from every ETag the entity (the table, partition and row) ever
// had, including before a delete or a table re-creation, even when
// writes land in one clock tick or the clock steps back. A write takes
// the request time, but strictly after: the entity's current timestamp,
// the partition's high-water mark (raised by every delete to the
// timestamp it retires), and the table's floor (raised on Delete Table
// to every timestamp of the old table). Inserts and updates only read
// the mark, so concurrent writes to different rows of a partition do not
// conflict.

// readHWM returns the partition high-water mark (0 when none).
func readHWM(tx kv.Tx, acct, table, pk string) (int64, error) {
	raw, err := tx.Get(hwmKey(acct, table, pk))
	switch {
	case err == nil && len(raw) == 8:
		return int64(binary.BigEndian.Uint64(raw)), nil
	case err == nil:
		return 0, errCorrupt
	case errors.Is(err, kv.ErrNotFound):
		return 0, nil
	}
	return 0, err
}

// nextTimestamp returns the timestamp of a write to partition pk that
// replaces entities whose latest timestamp is at most after.
func nextTimestamp(tx kv.Tx, acct string, t *tableRecord, pk string, now time.Time, after int64) (int64, error) {
	hwm, err := readHWM(tx, acct, t.Name, pk)
	if err != nil {
		return 0, err
	}
	ts := odata.Ticks(now)
	for _, floor := range []int64{hwm, t.Floor, after} {
		if ts <= floor {
			ts = floor + 1
		}
	}
	return ts, nil
}

// retire raises the partition high-water mark to ts, the timestamp of a
// deleted entity.
func retire(tx kv.Tx, acct, table, pk string, ts int64) error {
	hwm, err := readHWM(tx, acct, table, pk)
	if err != nil || hwm >= ts {
		return err
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(ts))
	return tx.Put(hwmKey(acct, table, pk), b[:])
}

// Property is one custom property of an entity: its name and its typed
// value (parsed from and rendered to OData JSON by the front end,
// internal/table/tablerest).
type Property struct {
	name string
	val  odata.Value
}

// NewProperty returns the property name with value v.
func NewProperty(name string, v odata.Value) Property { return Property{name: name, val: v} }

// Name is the property's name.
func (p Property) Name() string { return p.name }

// Value is the property's typed value.
func (p Property) Value() odata.Value { return p.val }

// Entity is a decoded entity: the typed value the domain methods take
// and return.
type Entity struct {
	pk, rk string
	ts     int64 // timestamp in ticks; also the ETag
	props  []Property
}

// PartitionKey is the entity's partition key.
func (e *Entity) PartitionKey() string { return e.pk }

// RowKey is the entity's row key.
func (e *Entity) RowKey() string { return e.rk }

// Timestamp is the entity's timestamp in ticks (odata.Ticks), which is
// also its ETag.
func (e *Entity) Timestamp() int64 { return e.ts }

// Properties are the entity's custom properties in stored order; the
// caller must not modify them.
func (e *Entity) Properties() []Property { return e.props }

// Property implements odata.Record.
func (e *Entity) Property(name string) (odata.Value, bool) {
	switch name {
	case "PartitionKey":
		return odata.StringValue(e.pk), true
	case "RowKey":
		return odata.StringValue(e.rk), true
	case "Timestamp":
		return odata.Value{Type: odata.DateTime, Int: e.ts}, true
	}
	for i := range e.props {
		if e.props[i].name == name {
			return e.props[i].val, true
		}
	}
	return odata.Value{}, false
}

// Stored entity format, version 1:
//
//	0x01, ts int64 BE, uvarint count, then per property:
//	uvarint len(name), name, type byte, value
//
// where values are: String/Binary uvarint length + bytes; Guid 16 bytes;
// Boolean 1 byte; Int32 4 bytes BE; Int64/DateTime 8 bytes BE; Double 8
// bytes of IEEE bits BE. Keys are not repeated: they are in the kv key.
const entityFormat = 1

func encodeEntity(e *Entity) []byte {
	n := 1 + 8 + binary.MaxVarintLen64
	for _, p := range e.props {
		n += 2*binary.MaxVarintLen64 + len(p.name) + 1 + 8 + len(p.val.Bytes)
	}
	b := make([]byte, 0, n)
	b = append(b, entityFormat)
	b = binary.BigEndian.AppendUint64(b, uint64(e.ts))
	b = binary.AppendUvarint(b, uint64(len(e.props)))
	for _, p := range e.props {
		b = binary.AppendUvarint(b, uint64(len(p.name)))
		b = append(b, p.name...)
		b = append(b, byte(p.val.Type))
		switch p.val.Type {
		case odata.String, odata.Binary:
			b = binary.AppendUvarint(b, uint64(len(p.val.Bytes)))
			b = append(b, p.val.Bytes...)
		case odata.Guid:
			b = append(b, p.val.Bytes...)
		case odata.Boolean:
			b = append(b, byte(p.val.Int))
		case odata.Int32:
			b = binary.BigEndian.AppendUint32(b, uint32(int32(p.val.Int)))
		case odata.Int64, odata.DateTime:
			b = binary.BigEndian.AppendUint64(b, uint64(p.val.Int))
		case odata.Double:
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.val.Float))
		}
	}
	return b
}

var errCorrupt = errors.New("table: corrupt entity record")

// entityView reads properties straight from a stored record without
// decoding the whole entity: a filter over a large partition touches
// only the properties it names. Keys and values alias the scanned key
// and record.
type entityView struct {
	pk, rk []byte
	raw    []byte
}

func (v *entityView) ts() int64 {
	if len(v.raw) < 9 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(v.raw[1:9]))
}

// Property implements odata.Record.
func (v *entityView) Property(name string) (odata.Value, bool) {
	switch name {
	case "PartitionKey":
		return odata.Value{Type: odata.String, Bytes: v.pk}, true
	case "RowKey":
		return odata.Value{Type: odata.String, Bytes: v.rk}, true
	case "Timestamp":
		return odata.Value{Type: odata.DateTime, Int: v.ts()}, true
	}
	it, err := newPropIter(v.raw)
	if err != nil {
		return odata.Value{}, false
	}
	for {
		n, val, ok := it.next()
		if !ok {
			return odata.Value{}, false
		}
		if string(n) == name {
			return val, true
		}
	}
}

// propIter walks the properties of a stored record. Names and values
// alias the record.
type propIter struct {
	b    []byte
	left uint64
	err  error
}

func newPropIter(raw []byte) (propIter, error) {
	if len(raw) < 9 || raw[0] != entityFormat {
		return propIter{}, errCorrupt
	}
	b := raw[9:]
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return propIter{}, errCorrupt
	}
	return propIter{b: b[n:], left: count}, nil
}

// next returns the next property; ok is false at the end or on a corrupt
// record (then it.err is set).
func (it *propIter) next() (name []byte, v odata.Value, ok bool) {
	if it.left == 0 || it.err != nil {
		return nil, v, false
	}
	it.left--
	b := it.b
	l, n := binary.Uvarint(b)
	if n <= 0 || l >= uint64(len(b)-n) {
		it.err = errCorrupt
		return nil, v, false
	}
	name = b[n : n+int(l)]
	b = b[n+int(l):]
	v.Type = odata.Type(b[0])
	b = b[1:]
	need := 0
	switch v.Type {
	case odata.String, odata.Binary:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			it.err = errCorrupt
			return nil, v, false
		}
		v.Bytes = b[n : n+int(l)]
		b = b[n+int(l):]
	case odata.Guid:
		need = 16
	case odata.Boolean:
		need = 1
	case odata.Int32:
		need = 4
	case odata.Int64, odata.DateTime, odata.Double:
		need = 8
	default:
		it.err = errCorrupt
		return nil, v, false
	}
	if len(b) < need {
		it.err = errCorrupt
		return nil, v, false
	}
	switch v.Type {
	case odata.Guid:
		v.Bytes = b[:16]
	case odata.Boolean:
		v.Int = int64(b[0])
	case odata.Int32:
		v.Int = int64(int32(binary.BigEndian.Uint32(b)))
	case odata.Int64, odata.DateTime:
		v.Int = int64(binary.BigEndian.Uint64(b))
	case odata.Double:
		v.Float = math.Float64frombits(binary.BigEndian.Uint64(b))
	}
	it.b = b[need:]
	return name, v, true
}

// decodeEntity decodes a stored record into an entity that owns its
// memory.
func decodeEntity(pk, rk string, raw []byte) (*Entity, error) {
	it, err := newPropIter(raw)
	if err != nil {
		return nil, err
	}
	e := &Entity{pk: pk, rk: rk, ts: int64(binary.BigEndian.Uint64(raw[1:9]))}
	if it.left < 1024 {
		e.props = make([]Property, 0, it.left)
	}
	for {
		name, v, ok := it.next()
		if !ok {
			break
		}
		if v.Bytes != nil {
			v.Bytes = append([]byte(nil), v.Bytes...)
		}
		e.props = append(e.props, Property{name: string(name), val: v})
	}
	if it.err != nil {
		return nil, it.err
	}
	return e, nil
}

// loadEntity returns the stored entity or nil.
func loadEntity(tx kv.Tx, acct, table, pk, rk string) (*Entity, error) {
	raw, err := tx.Get(entityKey(acct, table, pk, rk))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeEntity(pk, rk, raw)
}

// splitEntityKey decodes the (pk, rk) suffix of an entity key after the
// table prefix. Keys never contain control characters, so a component
// has no escaped zero byte and the results alias suffix; an escaped
// component (never written by this package) is decoded by copying.
func splitEntityKey(suffix []byte) (pk, rk []byte, ok bool) {
	i := bytes.IndexByte(suffix, 0)
	if i < 0 || i+1 >= len(suffix) || suffix[i+1] != 1 {
		return splitEscaped(suffix)
	}
	pk, rest := suffix[:i], suffix[i+2:]
	j := bytes.IndexByte(rest, 0)
	if j < 0 || j+2 != len(rest) || rest[j+1] != 1 {
		return splitEscaped(suffix)
	}
	return pk, rest[:j], true
}

func splitEscaped(suffix []byte) (pk, rk []byte, ok bool) {
	parts, ok := kv.Split(suffix)
	if !ok || len(parts) != 2 {
		return nil, nil, false
	}
	return []byte(parts[0]), []byte(parts[1]), true
}

func errTableNotFound() error { return azerr.New(azerr.TableNotFound) }
