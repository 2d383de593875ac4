package queue

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	json "github.com/goccy/go-json"
	"math"
	"strings"
	"time"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/kv"
	"github.com/cerulean-storage/cerulean/internal/policy"
)

// Keys. Every queue-service key starts with a component beginning with "q",
// so the service never collides with the Blob ("c", "b", "u", "x", "g") or
// Table namespaces; "sp" is the shared service-properties namespace.
//
//	q  / acct / queue                                       queue record (JSON)
//	qm / acct / queue / inc / msgid                         message record (binary)
//	qv / acct / queue / inc / shard / visibleAt / seq / id  visibility index; value: expiry + id
//	qg / acct / queue / inc                                 graveyard: an incarnation to purge
//	sp / acct / "queue"                                     Queue service properties (JSON)
//
// inc is the queue's incarnation: a random id chosen when the queue is
// created and replaced by Clear Messages. Messages are keyed under it, so
// Delete Queue and Clear Messages are one small atomic write (drop or
// rotate the incarnation) however many messages the queue holds; the old
// incarnation's keys are unreachable at once and are purged afterwards in
// bounded batches (see purge.go).
//
// The visibility index is split into numShards shards by the first hex
// digit of the message id (ids are random GUIDs, so shards fill evenly);
// see dequeue.go for why. Within a shard, visibleAt and seq are 8-byte
// big-endian components (visibleAt with the sign bit flipped so that the
// byte order is the numeric order), so a scan of a shard up to visibleAt
// <= now lists its visible messages in (visibility time, insertion
// sequence) order.
func queueKey(acct, name string) []byte  { return kv.Key("q", acct, name) }
func queuesPrefix(acct string) []byte    { return kv.Key("q", acct) }
func servicePropsKey(acct string) []byte { return kv.Key("sp", acct, "queue") }

func msgPrefix(acct, name, inc string) []byte { return kv.Key("qm", acct, name, inc) }
func msgKey(acct, name, inc, id string) []byte {
	return kv.Key("qm", acct, name, inc, id)
}
func visPrefix(acct, name, inc string) []byte { return kv.Key("qv", acct, name, inc) }
func graveKey(acct, name, inc string) []byte  { return kv.Key("qg", acct, name, inc) }
func graveyardPrefix() []byte                 { return kv.Key("qg") }

// numShards is the number of visibility-index shards: one per hex digit.
const numShards = 16

const hexDigits = "0123456789abcdef"

// shardOf is the shard of a message id: its first hex digit.
func shardOf(id string) int {
	if id == "" {
		return 0
	}
	if i := strings.IndexByte(hexDigits, id[0]); i >= 0 {
		return i
	}
	return int(id[0]) % numShards
}

// shardPrefix is the start of one shard of a queue's visibility index.
// Every shard prefix has the same length (a one-character component), so
// the rest of the index keys compare across shards.
func shardPrefix(prefix []byte, shard int) []byte {
	k := append(make([]byte, 0, len(prefix)+3), prefix...)
	return kv.AppendComponent(k, hexDigits[shard:shard+1])
}

// visKey is the visibility-index key of a message.
func visKey(prefix []byte, visibleAt int64, seq uint64, id string) []byte {
	k := shardPrefix(prefix, shardOf(id))
	k = kv.AppendComponent(k, orderedInt(visibleAt))
	k = kv.AppendComponent(k, orderedUint(seq))
	return kv.AppendComponent(k, id)
}

// visEnd is the end (exclusive) of the range of a shard (given its
// shardPrefix) holding the messages visible at now: every key of the
// shard whose visibleAt <= now sorts before it.
func visEnd(shard []byte, now int64) []byte {
	if now == math.MaxInt64 {
		return kv.PrefixEnd(shard)
	}
	k := append([]byte(nil), shard...)
	return kv.AppendComponent(k, orderedInt(now+1))
}

// appendOrderedInt appends orderedInt(v) as one component
// (kv.AppendComponent) without making the string.
func appendOrderedInt(b []byte, v int64) []byte {
	var o [8]byte
	binary.BigEndian.PutUint64(o[:], uint64(v)^(1<<63))
	for _, c := range o {
		if c == 0 {
			b = append(b, 0, 0xFF)
			continue
		}
		b = append(b, c)
	}
	return append(b, 0, 1)
}

func orderedInt(v int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(v)^(1<<63))
	return string(b[:])
}

func orderedUint(v uint64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return string(b[:])
}

// never is the expiry of a message put with messagettl=-1.
const never = math.MaxInt64

// neverTime is how an infinite expiry is reported: Azure's "Fri, 31 Dec 9999
// 23:59:59 GMT" (Put Message,
// https://learn.microsoft.com/en-us/rest/api/storageservices/put-message, for
// messagettl=-1).
var neverTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

func unixTime(ns int64) time.Time {
	if ns == never {
		return neverTime
	}
	return time.Unix(0, ns).UTC()
}

// queueRec is the stored record of a queue. Azure queues have no ETag or
// Last-Modified: metadata and ACL writes are last writer wins.
type queueRec struct {
	Inc  string            `json:"i"`
	Meta map[string]string `json:"md,omitempty"`
	ACL  []signedID        `json:"acl,omitempty"`
}

// signedID is a stored access policy; times are kept normalised to the
// 7-digit ISO form Azure returns (one shape, with its
// stored and XML forms, for all four services).
type signedID = policy.Stored

// loadQueue reads a queue record or returns 404 QueueNotFound.
func loadQueue(tx kv.Tx, acct, name string) (*queueRec, error) {
	raw, err := tx.Get(queueKey(acct, name))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, azerr.New(azerr.QueueNotFound)
	}
	if err != nil {
		return nil, err
	}
	var q queueRec
	if err := json.Unmarshal(raw, &q); err != nil {
		return nil, fmt.Errorf("decoding queue %s/%s: %w", acct, name, err)
	}
	return &q, nil
}

func putQueue(tx kv.Tx, acct, name string, q *queueRec) error {
	raw, err := json.Marshal(q)
	if err != nil {
		return err
	}
	return tx.Put(queueKey(acct, name), raw)
}

// newIncarnation returns a fresh random incarnation id. It is called
// outside Update fns so that a retried fn writes the same id.
func newIncarnation() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// message is a stored message. Times are Unix nanoseconds from the
// injected clock; Expires is never for messagettl=-1.
type message struct {
	ID        string // canonical lower-case GUID, from the key
	Seq       uint64
	Inserted  int64
	Expires   int64
	VisibleAt int64
	Dequeues  uint64
	Gen       uint64 // pop receipt generation: bumped by every dequeue and update
	Text      []byte
}

// expired reports whether m has expired at now (expired when now >= expiry).
func (m *message) expired(now int64) bool { return now >= m.Expires }

const msgVersion = 1

// msgHeader is the size of an encoded message record before the text.
const msgHeader = 1 + 6*8

// encode returns the binary record of m (the id lives in the key).
func (m *message) encode() []byte {
	b := make([]byte, msgHeader, msgHeader+len(m.Text))
	b[0] = msgVersion
	binary.BigEndian.PutUint64(b[1:], m.Seq)
	binary.BigEndian.PutUint64(b[9:], uint64(m.Inserted))
	binary.BigEndian.PutUint64(b[17:], uint64(m.Expires))
	binary.BigEndian.PutUint64(b[25:], uint64(m.VisibleAt))
	binary.BigEndian.PutUint64(b[33:], m.Dequeues)
	binary.BigEndian.PutUint64(b[41:], m.Gen)
	return append(b, m.Text...)
}

// decodeMessage parses a record written by encode; the text is copied.
func decodeMessage(id string, b []byte) (*message, error) {
	if len(b) < msgHeader || b[0] != msgVersion {
		return nil, fmt.Errorf("queue: malformed message record %s (%d bytes)", id, len(b))
	}
	return &message{
		ID:        id,
		Seq:       binary.BigEndian.Uint64(b[1:]),
		Inserted:  int64(binary.BigEndian.Uint64(b[9:])),
		Expires:   int64(binary.BigEndian.Uint64(b[17:])),
		VisibleAt: int64(binary.BigEndian.Uint64(b[25:])),
		Dequeues:  binary.BigEndian.Uint64(b[33:]),
		Gen:       binary.BigEndian.Uint64(b[41:]),
		Text:      append([]byte(nil), b[msgHeader:]...),
	}, nil
}

// indexValue is the value of a visibility-index entry: the message's
// expiry (so scans can skip expired messages without reading records) and
// its id.
func indexValue(m *message) []byte {
	b := make([]byte, 8, 8+len(m.ID))
	binary.BigEndian.PutUint64(b, uint64(m.Expires))
	return append(b, m.ID...)
}

// parseIndexValue decodes the index entry v stored under key k. An entry
// too short to hold an expiry and an id is an error: a scan that skipped it
// would never deliver, count or expire its message.
func parseIndexValue(k, v []byte) (expires int64, id string, err error) {
	if len(v) <= 8 {
		return 0, "", fmt.Errorf("queue: malformed visibility index entry %q", k)
	}
	return int64(binary.BigEndian.Uint64(v)), string(v[8:]), nil
}

// writeMessage stores m and its index entry.
func writeMessage(tx kv.Tx, acct, name, inc string, m *message) error {
	if err := tx.Put(msgKey(acct, name, inc, m.ID), m.encode()); err != nil {
		return err
	}
	return tx.Put(visKey(visPrefix(acct, name, inc), m.VisibleAt, m.Seq, m.ID), indexValue(m))
}

// removeMessage deletes m and its index entry.
func removeMessage(tx kv.Tx, acct, name, inc string, m *message) error {
	if err := tx.Delete(msgKey(acct, name, inc, m.ID)); err != nil {
		return err
	}
	return tx.Delete(visKey(visPrefix(acct, name, inc), m.VisibleAt, m.Seq, m.ID))
}

// loadMessage reads a message; ok is false when it does not exist.
func loadMessage(tx kv.Tx, acct, name, inc, id string) (*message, bool, error) {
	raw, err := tx.Get(msgKey(acct, name, inc, id))
	if errors.Is(err, kv.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	m, err := decodeMessage(id, raw)
	if err != nil {
		return nil, false, err
	}
	return m, true, nil
}

// QueueID names one queue of one account. The name is valid
// (wire.ValidQueueName): the front end checks it when routing.
type QueueID struct {
	Account string
	Name    string
}
