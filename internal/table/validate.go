package table

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// Limits of an entity (the request limits are the front end's).
const (
	maxEntitySize = 1 << 20 // bytes, Azure's size formula
	maxKeySize    = 1 << 10 // PartitionKey / RowKey (UTF-16 bytes)
	// MaxCustomProperties is how many custom properties an entity may
	// have, besides PartitionKey, RowKey and Timestamp.
	MaxCustomProperties = 252
)

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// CheckKey validates a PartitionKey or RowKey value (name is the
// property's name, for the message): at most 1 KiB as UTF-16, valid
// UTF-8, and none of / \ # ? or a control character.
func CheckKey(name, v string) error {
	if utf16Len(v)*2 > maxKeySize {
		return azerr.Newf(azerr.PropertyValueTooLarge, "The %s value is larger than 1 KiB.", name)
	}
	for _, r := range v {
		switch {
		case r == '/' || r == '\\' || r == '#' || r == '?',
			r <= 0x1f, r >= 0x7f && r <= 0x9f:
			return azerr.Newf(azerr.InvalidInput, "The '%s' parameter of value '%s' contains a character that is not permitted (/ \\ # ? or a control character).", name, printableKey(v))
		}
	}
	if !utf8.ValidString(v) {
		return azerr.Newf(azerr.InvalidInput, "The %s value is not valid UTF-8.", name)
	}
	return nil
}

func printableKey(v string) string {
	return strings.Map(func(r rune) rune {
		if r <= 0x1f || (r >= 0x7f && r <= 0x9f) {
			return '?'
		}
		return r
	}, v)
}

// entitySize is Azure's formula for the size of an entity: 4 bytes, the
// keys as UTF-16, and per property 8 bytes plus the name as UTF-16 plus
// the value.
func entitySize(e *Entity) int {
	n := 4 + 2*utf16Len(e.pk) + 2*utf16Len(e.rk) + 8 // Timestamp
	for _, p := range e.props {
		n += 8 + 2*utf16Len(p.name)
		switch p.val.Type {
		case odata.String:
			n += 4 + 2*utf16Len(string(p.val.Bytes))
		case odata.Binary:
			n += 4 + len(p.val.Bytes)
		case odata.Boolean:
			n++
		case odata.Int32:
			n += 4
		case odata.Guid:
			n += 16
		default:
			n += 8
		}
	}
	return n
}

// checkEntity validates e as CheckEntity does.
func checkEntity(e *Entity) error {
	return CheckEntity(e.pk, e.rk, e.props)
}

// CheckEntity validates an entity about to be stored, given its keys and
// custom properties: at most MaxCustomProperties properties (400
// TooManyProperties) and at most 1 MiB by Azure's size formula (400
// EntityTooLarge).
func CheckEntity(pk, rk string, props []Property) error {
	e := &Entity{pk: pk, rk: rk, props: props}
	if len(e.props) > MaxCustomProperties {
		return azerr.New(azerr.TooManyProperties)
	}
	if entitySize(e) > maxEntitySize {
		return azerr.New(azerr.EntityTooLarge)
	}
	return nil
}
