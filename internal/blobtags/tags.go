// Package blobtags holds blob index tags: their validation, their wire
// forms (the x-ms-tags header and the Set/Get Blob Tags XML body), and
// the tag expressions of Find Blobs by Tags (where=) and of the
// x-ms-if-tags condition.
//
// Limits, as Azure documents them for Set Blob Tags: at most 10 tags per
// blob; keys of 1 to 128 characters, values of up to 256; keys and values
// made of letters, digits, space and + - . / : = _ (400 TagsTooLarge,
// EmptyTagName, InvalidTag, DuplicateTagNames).
package blobtags

import (
	"bytes"
	"encoding/xml"
	"net/url"
	"sort"
	"strings"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/wire"
)

const (
	maxTags     = 10
	maxKeyLen   = 128
	maxValueLen = 256
)

// Tags are a blob's index tags by key.
type Tags map[string]string

// Keys returns the keys in order.
func (t Tags) Keys() []string {
	ks := make([]string, 0, len(t))
	for k := range t {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// validChars reports whether s holds only the characters tags allow.
func validChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == ' ', c == '+', c == '-', c == '.', c == '/', c == ':', c == '=', c == '_':
		default:
			return false
		}
	}
	return true
}

// add validates one tag and adds it to t.
func (t Tags) add(k, v string) error {
	if len(t) >= maxTags {
		return azerr.New(azerr.TagsTooLarge)
	}
	if k == "" {
		return azerr.New(azerr.EmptyTagName)
	}
	if len(k) > maxKeyLen || len(v) > maxValueLen {
		return azerr.New(azerr.TagsTooLarge)
	}
	if !validChars(k) || !validChars(v) {
		return azerr.New(azerr.InvalidTag)
	}
	if _, dup := t[k]; dup {
		return azerr.New(azerr.DuplicateTagNames)
	}
	t[k] = v
	return nil
}

// ParseHeader reads x-ms-tags: a URL-encoded query string, k1=v1&k2=v2.
// An empty header is no tags (nil).
func ParseHeader(v string) (Tags, error) {
	if v == "" {
		return nil, nil
	}
	t := Tags{}
	for _, pair := range strings.Split(v, "&") {
		rk, rv, _ := strings.Cut(pair, "=")
		k, err1 := url.QueryUnescape(rk)
		val, err2 := url.QueryUnescape(rv)
		if err1 != nil || err2 != nil {
			return nil, azerr.InvalidHeader("x-ms-tags", v)
		}
		if err := t.add(k, val); err != nil {
			return nil, err
		}
	}
	return t, nil
}

type tagXML struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

type tagsXML struct {
	XMLName xml.Name `xml:"Tags"`
	TagSet  struct {
		Tags []tagXML `xml:"Tag"`
	} `xml:"TagSet"`
}

// ParseXML reads the body of Set Blob Tags. An empty body, or an empty
// TagSet, removes every tag.
func ParseXML(body []byte) (Tags, error) {
	t := Tags{}
	if len(bytes.TrimSpace(body)) == 0 {
		return t, nil
	}
	var doc tagsXML
	if err := xml.Unmarshal(body, &doc); err != nil {
		return nil, azerr.New(azerr.InvalidXMLDocument)
	}
	for _, x := range doc.TagSet.Tags {
		if err := t.add(x.Key, x.Value); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// AppendXML appends the <Tags><TagSet>…</TagSet></Tags> element holding
// the named tags of t (all of them when keys is nil), in key order.
func AppendXML(b []byte, t Tags, keys []string) []byte {
	if keys == nil {
		keys = t.Keys()
	}
	b = append(b, "<Tags><TagSet>"...)
	for _, k := range keys {
		v, ok := t[k]
		if !ok {
			continue
		}
		b = append(b, "<Tag><Key>"...)
		b = wire.AppendXMLText(b, k)
		b = append(b, "</Key><Value>"...)
		b = wire.AppendXMLText(b, v)
		b = append(b, "</Value></Tag>"...)
	}
	return append(b, "</TagSet></Tags>"...)
}
