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
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := DecodeJSON(key, raw, v); err != nil {
		return false, err
	}
	return true, nil
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

// PutJSON stores v as JSON under key.
func PutJSON(tx Tx, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(key, raw)
}
