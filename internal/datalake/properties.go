package datalake

import (
	"encoding/base64"
	"sort"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

// hProperties is the dfs endpoint's user-defined properties header:
// "n1=v1, n2=v2, ...", each value base64-encoded (Filesystem - Create,
// Path - Create, "x-ms-properties"). They are the metadata the Blob API
// shows as x-ms-meta-* headers, with the values decoded.
const hProperties = "x-ms-properties"

// parseProperties reads an x-ms-properties value into metadata. Names
// follow the Blob metadata rules (C# identifiers, each once ignoring
// case, 8 KiB in all); a pair without "=", a value that is not base64 or
// does not decode to ISO-8859-1 text a header can carry, or a broken
// name is 400 InvalidHeaderValue naming the header. An empty value is no
// properties.
func parseProperties(v string) (map[string]string, error) {
	md := map[string]string{}
	if strings.TrimSpace(v) == "" {
		return md, nil
	}
	bad := func() error { return azerr.InvalidHeader(hProperties, v) }
	seen := map[string]bool{}
	total := 0
	for _, pair := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
		name = strings.TrimSpace(name)
		if !ok || !wire.ValidMetadataName(name) || seen[strings.ToLower(name)] {
			return nil, bad()
		}
		seen[strings.ToLower(name)] = true
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(val))
		if err != nil {
			return nil, bad()
		}
		for _, c := range raw {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return nil, bad()
			}
		}
		md[name] = string(raw)
		total += len(name) + len(raw)
	}
	if total > wire.MaxMetadataSize {
		return nil, azerr.New(azerr.MetadataTooLarge)
	}
	return md, nil
}

// formatProperties renders metadata as x-ms-properties, names sorted; ""
// for none.
func formatProperties(md map[string]string) string {
	if len(md) == 0 {
		return ""
	}
	names := make([]string, 0, len(md))
	for n := range md {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(base64.StdEncoding.EncodeToString([]byte(md[n])))
	}
	return b.String()
}
