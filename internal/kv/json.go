package kv

import (
	"fmt"

	json "github.com/goccy/go-json"
)

// GetJSON decodes the JSON value of key into v. It reports false, and no
// error, when the key does not exist.
func GetJSON(tx Tx, key []byte, v any) (bool, error) {
	return GetDecoded(tx, key, v, func(raw []byte) error { return DecodeJSON(key, raw, v) })
}

// GetDecoded is GetJSON with the decoding of the value into v left to
// decode (a caller that keeps the bytes, or decodes from a memo): it
// reports false, and no error, when the key does not exist, and tells a
// GetObserver what was read.
func GetDecoded(tx Tx, key []byte, v any, decode func(raw []byte) error) (bool, error) {
	raw, err := tx.Get(key)
	if err == ErrNotFound {
		if o, ok := tx.(GetObserver); ok {
			o.ObserveGet(key, nil)
		}
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := decode(raw); err != nil {
		return false, err
	}
	if o, ok := tx.(GetObserver); ok {
		o.ObserveGet(key, v)
	}
	return true, nil
}

// GetObserver is implemented by a Tx wrapper that wants the values GetJSON
// decodes, so that it need not read and decode the same key again.
// ObserveGet is called after the decoding, with v, or with nil when the
// key does not exist; v must not be kept past the call (copy what is
// needed): its owner may change it afterwards.
type GetObserver interface {
	ObserveGet(key []byte, v any)
}

// DecodeJSON decodes the JSON record raw stored under key into v. A record
// that does not decode is an error naming its key: callers scanning a range
// must stop on it rather than skip the record, which would leave whatever
// it references (chunk references, expiry index entries) behind.
//
// A v that is a Decoder reads its own stored form instead, unless raw is
// JSON (begins with '{': a record written before the type had a form of
// its own).
func DecodeJSON(key, raw []byte, v any) error {
	if d, ok := v.(Decoder); ok && (len(raw) == 0 || raw[0] != '{') {
		if err := d.DecodeRecord(raw); err != nil {
			return fmt.Errorf("decoding %q: %w", key, err)
		}
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decoding %q: %w", key, err)
	}
	return nil
}

// PutJSON stores v as JSON (or, when v is an Encoder, in its own form)
// under key, and then hands v to tx when tx is a PutObserver.
func PutJSON(tx Tx, key []byte, v any) error {
	var raw []byte
	var err error
	if e, ok := v.(Encoder); ok {
		raw, err = e.EncodeRecord()
	} else {
		raw, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	if err := tx.Put(key, raw); err != nil {
		return err
	}
	if o, ok := tx.(PutObserver); ok {
		o.ObservePut(key, v)
	}
	return nil
}

// PutObserver is implemented by a Tx wrapper that wants the values PutJSON
// stores as they were before encoding, so that it need not decode again
// what the transaction has just written. ObservePut is called after the
// Put of key succeeded; v must not be kept past the call (copy what is
// needed): its owner may change it afterwards.
type PutObserver interface {
	ObservePut(key []byte, v any)
}

// Encoder is a record type with a stored form of its own, cheaper to
// write and read than its JSON: PutJSON stores EncodeRecord's bytes. The
// form must not begin with '{', which DecodeJSON takes for JSON.
type Encoder interface {
	EncodeRecord() ([]byte, error)
}

// Decoder reads the form an Encoder wrote (GetJSON, DecodeJSON). raw is
// valid only inside the transaction that read it: DecodeRecord copies
// what it keeps.
type Decoder interface {
	DecodeRecord(raw []byte) error
}
