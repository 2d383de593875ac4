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
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("decoding %q: %w", key, err)
	}
	return true, nil
}

// PutJSON stores v as JSON under key.
func PutJSON(tx Tx, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Put(key, raw)
}
