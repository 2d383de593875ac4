package kv

import (
	"fmt"

	json "github.com/goccy/go-json"
)

// GetJSON decodes the JSON value of key into v. It reports false, and no
// error, when the key does not exist.
func GetJSON(tx Tx, key []byte, v any) (bool, error) {
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
	if err := DecodeJSON(key, raw, v); err != nil {
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
func DecodeJSON(key, raw []byte, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("decoding %q: %w", key, err)
	}
	return nil
}

// PutJSON stores v as JSON under key, and then hands v to tx when tx is
// a PutObserver.
func PutJSON(tx Tx, key []byte, v any) error {
	raw, err := json.Marshal(v)
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
