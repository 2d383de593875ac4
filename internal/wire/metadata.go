package wire

import (
	"encoding/xml"
	"sort"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
)

// MetaPrefix is the prefix of metadata headers.
const MetaPrefix = "x-ms-meta-"

// MaxMetadataSize is the limit on the total size of all metadata names and
// values, in bytes: "can be up to 8 KB" (Setting and retrieving properties
// and metadata for Blob service resources,
// https://learn.microsoft.com/en-us/rest/api/storageservices/setting-and-retrieving-properties-and-metadata-for-blob-resources).
const MaxMetadataSize = 8 * 1024

// ParseMetadata collects x-ms-meta-* headers into a map keyed by the
// metadata name. It returns an empty non-nil map when there is no
// metadata.
//
// Case: Azure preserves the case of names as sent but treats them
// case-insensitively (same page). net/http canonicalises header keys on
// receipt (x-ms-meta-myKey arrives as X-Ms-Meta-Mykey); the server restores
// the name as sent under the key "x-ms-meta-" + name (server/rawnames.go),
// which is kept as it is. A key in any other form (canonical, from a
// batch sub-request or a hand-built header) has lost the sent case: its
// name is lower-cased. Duplicates are found case-insensitively.
//
// Errors, checked in this order for each header, then for the total:
//   - empty name (x-ms-meta-): 400 EmptyMetadataKey (Common REST API error
//     codes);
//   - name not a C# identifier (ASCII letter or _ first, then letters,
//     digits, _; the rule Azurite applies; C# keywords are not
//     rejected (inferred)): 400 InvalidMetadata;
//   - the same name twice, in any case or as repeated header values: 400
//     InvalidMetadata (the page above says 400 without a code; the code
//     is Cerulean's choice);
//   - total of len(name)+len(value) over all pairs > 8 KiB: 400
//     MetadataTooLarge (Common REST API error codes).
func ParseMetadata(h Header) (map[string]string, error) {
	// Visit keys in sorted order so that the reported error is deterministic.
	keys := make([]string, 0, 8)
	for key, vals := range h {
		if len(vals) > 0 && len(key) >= len(MetaPrefix) && strings.EqualFold(key[:len(MetaPrefix)], MetaPrefix) {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	md := make(map[string]string, len(keys))
	seen := make(map[string]struct{}, len(keys))
	total := 0
	for _, key := range keys {
		vals := h[key]
		name := key[len(MetaPrefix):]
		if name == "" {
			return nil, azerr.New(azerr.EmptyMetadataKey)
		}
		if !validIdentifier(name) {
			return nil, azerr.New(azerr.InvalidMetadata)
		}
		lower := strings.ToLower(name)
		if _, dup := seen[lower]; dup || len(vals) != 1 {
			return nil, azerr.Newf(azerr.InvalidMetadata, "The metadata name %s is specified more than once.", name)
		}
		seen[lower] = struct{}{}
		if !strings.HasPrefix(key, MetaPrefix) {
			// A canonicalized key (X-Ms-Meta-Mykey): the sent case is lost.
			name = lower
		}
		md[name] = vals[0]
		total += len(name) + len(vals[0])
	}
	if total > MaxMetadataSize {
		return nil, azerr.New(azerr.MetadataTooLarge)
	}
	return md, nil
}

// ValidMetadataName reports whether s may name metadata: an ASCII C#
// identifier (see ParseMetadata). The dfs endpoint's x-ms-properties
// names follow the same rule.
func ValidMetadataName(s string) bool { return validIdentifier(s) }

// validIdentifier reports whether s is an ASCII C# identifier:
// [A-Za-z_][A-Za-z0-9_]*.
func validIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// MetadataXML renders metadata in listings as
// <Metadata><key>value</key>...</Metadata>, keys sorted.
type MetadataXML map[string]string

// MarshalXML implements xml.Marshaler.
func (m MetadataXML) MarshalXML(e *xml.Encoder, start xml.StartElement) error {
	if err := e.EncodeToken(start); err != nil {
		return err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := e.EncodeElement(m[k], xml.StartElement{Name: xml.Name{Local: k}}); err != nil {
			return err
		}
	}
	return e.EncodeToken(start.End())
}

// WriteMetadata sets an x-ms-meta-{name} response header for each entry
// of meta, with the name in the case it was stored in and the prefix in
// lower case, as Azure sends them. Header.Set would canonicalize the key
// (X-Ms-Meta-Name), and the Python SDKs collect metadata from the headers
// that start with "x-ms-meta-" exactly: they would see none.
func WriteMetadata(h Header, meta map[string]string) {
	for k, v := range meta {
		h[MetaPrefix+k] = []string{v}
	}
}
