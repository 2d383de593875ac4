package file

import "strings"

// The names of the SMB file attributes as the REST API writes them
// (x-ms-file-attributes), and their parsing: one vocabulary both doors
// and the listings use.

var attrNames = []struct {
	bit  Attributes
	name string
}{
	{AttrReadOnly, "ReadOnly"},
	{AttrHidden, "Hidden"},
	{AttrSystem, "System"},
	{AttrDirectory, "Directory"},
	{AttrArchive, "Archive"},
	{AttrTemporary, "Temporary"},
	{AttrOffline, "Offline"},
	{AttrNotContentIndexed, "NotContentIndexed"},
	{AttrNoScrubData, "NoScrubData"},
}

// ParseAttributes parses "ReadOnly|Archive" (case-insensitive, spaces
// around separators allowed; "None" alone means no attribute). ok is false
// for an unknown name, an empty element, or "None" combined with others.
func ParseAttributes(s string) (a Attributes, ok bool) {
	none := false
	n := 0
	for _, f := range strings.Split(s, "|") {
		f = strings.TrimSpace(f)
		n++
		if strings.EqualFold(f, "None") {
			none = true
			continue
		}
		found := false
		for _, an := range attrNames {
			if strings.EqualFold(f, an.name) {
				a |= an.bit
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	if none && n > 1 {
		return 0, false
	}
	return a, true
}

// String formats attributes as the service does: names joined by " | ",
// "None" when there are none.
func (a Attributes) String() string {
	var parts []string
	for _, an := range attrNames {
		if a&an.bit != 0 {
			parts = append(parts, an.name)
		}
	}
	if len(parts) == 0 {
		return "None"
	}
	return strings.Join(parts, " | ")
}
