package tablerest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cerulean-storage/cerulean/internal/azerr"
	"github.com/cerulean-storage/cerulean/internal/table"
	"github.com/cerulean-storage/cerulean/internal/table/odata"
)

// Limits of a Table request (the entity's own are table.CheckKey's and
// table.CheckEntity's).
const (
	maxValueSize      = 64 << 10 // Edm.String (UTF-16 bytes) and Edm.Binary
	maxPropNameLen    = 255
	maxBodySize       = 4 << 20
	maxPageSize       = 1000
	maxBatchOps       = 100
	maxBatchBodySize  = 4 << 20
	maxACLPolicies    = 5
	maxSignedIDLength = 64
)

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// rawProp is one name/value pair of a request body before typing.
type rawProp struct {
	name string
	val  any // string, json.Number, bool or nil
}

// parseEntityBody reads a JSON entity from a request body: the custom
// properties typed by their @odata.type annotations (or inferred from
// the JSON value), plus PartitionKey and RowKey when present.
func parseEntityBody(body []byte) (props []table.Property, pk, rk *string, err error) {
	members, err := parseFlatObject(body)
	if err != nil {
		var ne *errNested
		if errors.As(err, &ne) {
			return nil, nil, nil, azerr.Newf(azerr.InvalidInput, "The value of property '%s' must be a JSON string, number, boolean or null.", ne.name)
		}
		return nil, nil, nil, invalidJSON(err)
	}
	var raws []rawProp
	annot := map[string]string{}
	seen := make(map[string]bool, len(members))
	for _, m := range members {
		name := m.name
		if base, suffix, ok := strings.Cut(name, "@"); ok {
			if suffix == "odata.type" {
				s, isStr := m.val.(string)
				if !isStr {
					return nil, nil, nil, azerr.Newf(azerr.InvalidInput, "The type annotation of property '%s' must be a string.", base)
				}
				if _, dup := annot[base]; dup {
					return nil, nil, nil, azerr.Newf(azerr.DuplicatePropertiesSpecified, "The type of property '%s' is specified more than one time.", base)
				}
				annot[base] = s
			}
			continue
		}
		if strings.HasPrefix(name, "odata.") {
			continue
		}
		if seen[name] {
			return nil, nil, nil, azerr.Newf(azerr.DuplicatePropertiesSpecified, "The property '%s' is specified more than one time.", name)
		}
		seen[name] = true
		raws = append(raws, rawProp{name: name, val: m.val})
	}
	for name, t := range annot {
		if !seen[name] {
			if _, ok := odata.ParseType(t); !ok {
				return nil, nil, nil, azerr.Newf(azerr.InvalidInput, "The type '%s' of property '%s' is not supported.", t, name)
			}
		}
	}
	for _, rp := range raws {
		switch rp.name {
		case "PartitionKey", "RowKey":
			s, ok := rp.val.(string)
			if !ok {
				return nil, nil, nil, azerr.Newf(azerr.InvalidInput, "The %s property must be a string.", rp.name)
			}
			if t, ok := annot[rp.name]; ok && t != "Edm.String" {
				return nil, nil, nil, azerr.Newf(azerr.InvalidInput, "The %s property must be of type Edm.String.", rp.name)
			}
			if rp.name == "PartitionKey" {
				pk = &s
			} else {
				rk = &s
			}
			continue
		case "Timestamp":
			continue // maintained by the service
		}
		if rp.val == nil {
			// Azure stores no nulls: a null property is simply absent.
			continue
		}
		if err := checkPropertyName(rp.name); err != nil {
			return nil, nil, nil, err
		}
		v, err := typedValue(rp.name, rp.val, annot[rp.name])
		if err != nil {
			return nil, nil, nil, err
		}
		props = append(props, table.NewProperty(rp.name, v))
	}
	if len(props) > table.MaxCustomProperties {
		return nil, nil, nil, azerr.New(azerr.TooManyProperties)
	}
	return props, pk, rk, nil
}

func invalidJSON(err error) error {
	return azerr.Newf(azerr.InvalidInput, "The request body is not valid JSON: %s.", strings.TrimPrefix(err.Error(), "json: "))
}

// checkPropertyName applies Azure's rules: C# identifier characters, at
// most 255 characters.
func checkPropertyName(name string) error {
	if utf8.RuneCountInString(name) > maxPropNameLen {
		return azerr.New(azerr.PropertyNameTooLong)
	}
	if name == "" || !utf8.ValidString(name) {
		return azerr.Newf(azerr.PropertyNameInvalid, "The property name '%s' is invalid.", name)
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
		if i > 0 {
			ok = ok || unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc, unicode.Cf)
		}
		if !ok {
			return azerr.Newf(azerr.PropertyNameInvalid, "The property name '%s' is invalid.", name)
		}
	}
	return nil
}

func badValue(name, typ string) error {
	return azerr.Newf(azerr.InvalidInput, "The value of property '%s' is not a valid %s.", name, typ)
}

// typedValue converts a JSON value to the EDM type named by its
// annotation, or infers the type: strings are Edm.String, booleans
// Edm.Boolean, integers in the Int32 range Edm.Int32 and other numbers
// Edm.Double.
func typedValue(name string, raw any, annotation string) (odata.Value, error) {
	t := odata.Invalid
	if annotation != "" {
		var ok bool
		if t, ok = odata.ParseType(annotation); !ok {
			return odata.Value{}, azerr.Newf(azerr.InvalidInput, "The type '%s' of property '%s' is not supported.", annotation, name)
		}
	} else {
		switch x := raw.(type) {
		case string:
			t = odata.String
		case bool:
			t = odata.Boolean
		case json.Number:
			t = odata.Double
			if i, err := strconv.ParseInt(string(x), 10, 32); err == nil && !strings.ContainsAny(string(x), ".eE") {
				return odata.Int32Value(int32(i)), nil
			}
		}
	}
	str, isStr := raw.(string)
	num, isNum := raw.(json.Number)
	switch t {
	case odata.String:
		if !isStr {
			return odata.Value{}, badValue(name, "Edm.String")
		}
		if utf16Len(str)*2 > maxValueSize {
			return odata.Value{}, azerr.Newf(azerr.PropertyValueTooLarge, "The value of property '%s' is larger than 64 KiB.", name)
		}
		return odata.StringValue(str), nil
	case odata.Boolean:
		// An annotated Edm.Boolean may also come as the JSON string
		// "true" or "false" (any case), which the service accepts as it
		// accepts Edm.Int32 and Edm.Double in their string forms.
		if b, ok := raw.(bool); ok {
			return odata.BoolValue(b), nil
		}
		switch {
		case isStr && strings.EqualFold(str, "true"):
			return odata.BoolValue(true), nil
		case isStr && strings.EqualFold(str, "false"):
			return odata.BoolValue(false), nil
		}
		return odata.Value{}, badValue(name, "Edm.Boolean")
	case odata.Int32:
		s := str
		if isNum {
			s = string(num)
		} else if !isStr {
			return odata.Value{}, badValue(name, "Edm.Int32")
		}
		i, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return odata.Value{}, badValue(name, "Edm.Int32")
		}
		return odata.Int32Value(int32(i)), nil
	case odata.Int64:
		s := str
		if isNum {
			s = string(num)
		} else if !isStr {
			return odata.Value{}, badValue(name, "Edm.Int64")
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return odata.Value{}, badValue(name, "Edm.Int64")
		}
		return odata.Int64Value(i), nil
	case odata.Double:
		s := str
		if isNum {
			s = string(num)
		} else if !isStr {
			return odata.Value{}, badValue(name, "Edm.Double")
		}
		switch s {
		case "NaN":
			return odata.DoubleValue(math.NaN()), nil
		case "Infinity", "INF":
			return odata.DoubleValue(math.Inf(1)), nil
		case "-Infinity", "-INF":
			return odata.DoubleValue(math.Inf(-1)), nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return odata.Value{}, badValue(name, "Edm.Double")
		}
		return odata.DoubleValue(f), nil
	case odata.DateTime:
		if !isStr {
			return odata.Value{}, badValue(name, "Edm.DateTime")
		}
		tm, err := odata.ParseDateTime(str)
		if err != nil {
			return odata.Value{}, badValue(name, "Edm.DateTime")
		}
		return odata.DateTimeValue(tm), nil
	case odata.Guid:
		if !isStr {
			return odata.Value{}, badValue(name, "Edm.Guid")
		}
		g, err := odata.ParseGuid(str)
		if err != nil {
			return odata.Value{}, badValue(name, "Edm.Guid")
		}
		return odata.Value{Type: odata.Guid, Bytes: g}, nil
	case odata.Binary:
		if !isStr {
			return odata.Value{}, badValue(name, "Edm.Binary")
		}
		b, err := base64.StdEncoding.DecodeString(str)
		if err != nil {
			return odata.Value{}, badValue(name, "Edm.Binary")
		}
		if len(b) > maxValueSize {
			return odata.Value{}, azerr.Newf(azerr.PropertyValueTooLarge, "The value of property '%s' is larger than 64 KiB.", name)
		}
		return odata.BinaryValue(b), nil
	}
	return odata.Value{}, badValue(name, "value")
}

// Response formats selected by Accept or $format.
type format int

const (
	minimalMeta format = iota
	noMeta
	fullMeta
)

func (f format) contentType() string {
	switch f {
	case noMeta:
		return "application/json;odata=nometadata;streaming=true;charset=utf-8"
	case fullMeta:
		return "application/json;odata=fullmetadata;streaming=true;charset=utf-8"
	}
	return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
}

// parseFormat reads $format (which wins, as for OData 3.0) or Accept.
func parseFormat(accept, dollarFormat string) (format, error) {
	s := accept
	if dollarFormat != "" {
		s = dollarFormat
		if s == "json" {
			return minimalMeta, nil
		}
	}
	if strings.TrimSpace(s) == "" {
		return minimalMeta, nil
	}
	sawXML := false
	// Items and parameters are cut in place (every request reads its
	// Accept header here), media types compared without case.
	for rest, more := s, true; more; {
		var item string
		item, rest, more = strings.Cut(rest, ",")
		mtRaw, params, _ := strings.Cut(item, ";")
		mt := strings.TrimSpace(mtRaw)
		switch {
		case strings.EqualFold(mt, "application/json"):
			f := minimalMeta
			for params != "" {
				var p string
				p, params, _ = strings.Cut(params, ";")
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				if strings.EqualFold(k, "odata") {
					switch {
					case strings.EqualFold(v, "nometadata"):
						f = noMeta
					case strings.EqualFold(v, "fullmetadata"):
						f = fullMeta
					case strings.EqualFold(v, "minimalmetadata"), v == "":
					default:
						return 0, azerr.Newf(azerr.InvalidInput, "The odata parameter '%s' of the requested format is not supported.", v)
					}
				}
			}
			return f, nil
		case mt == "*/*", strings.EqualFold(mt, "application/*"):
			return minimalMeta, nil
		case strings.EqualFold(mt, "application/atom+xml"), strings.EqualFold(mt, "application/xml"), strings.EqualFold(mt, "text/xml"):
			sawXML = true
		}
	}
	if sawXML {
		return 0, azerr.New(azerr.AtomFormatNotSupported)
	}
	return 0, azerr.Newf(azerr.JSONFormatNotSupported, "The requested format '%s' is not supported; use application/json.", s)
}

// jsonOut renders entities and tables as OData JSON.
type jsonOut struct {
	f       format
	base    string // http://host/account
	account string
	table   string
	sel     []string // nil: every property
}

func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&15])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// keyPredicate renders "(PartitionKey='pk',RowKey='rk')" with the keys
// URL-escaped and single quotes doubled.
func keyPredicate(pk, rk string) string {
	esc := func(s string) string { return url.PathEscape(strings.ReplaceAll(s, "'", "''")) }
	return "(PartitionKey='" + esc(pk) + "',RowKey='" + esc(rk) + "')"
}

func (o *jsonOut) selected(name string) bool {
	if o.sel == nil {
		return true
	}
	for _, s := range o.sel {
		if s == name {
			return true
		}
	}
	return false
}

// appendEntity renders one entity. single adds odata.metadata (a
// response that is one entity rather than a feed).
func (o *jsonOut) appendEntity(b []byte, e *table.Entity, single bool) []byte {
	b = append(b, '{')
	first := true
	key := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, name)
		b = append(b, ':')
	}
	if o.f != noMeta {
		if single {
			key("odata.metadata")
			b = appendJSONString(b, o.base+"/$metadata#"+o.table+"/@Element")
		}
		if o.f == fullMeta {
			key("odata.type")
			b = appendJSONString(b, o.account+"."+o.table)
			key("odata.id")
			b = appendJSONString(b, o.base+"/"+o.table+keyPredicate(e.PartitionKey(), e.RowKey()))
		}
		key("odata.etag")
		b = appendJSONString(b, formatETag(e.Timestamp()))
		if o.f == fullMeta {
			key("odata.editLink")
			b = appendJSONString(b, o.table+keyPredicate(e.PartitionKey(), e.RowKey()))
		}
	}
	if o.selected("PartitionKey") {
		key("PartitionKey")
		b = appendJSONString(b, e.PartitionKey())
	}
	if o.selected("RowKey") {
		key("RowKey")
		b = appendJSONString(b, e.RowKey())
	}
	if o.selected("Timestamp") {
		if o.f == fullMeta {
			key("Timestamp@odata.type")
			b = appendJSONString(b, "Edm.DateTime")
		}
		key("Timestamp")
		b = appendJSONString(b, odata.FormatDateTime(odata.FromTicks(e.Timestamp())))
	}
	for _, p := range e.Properties() {
		if !o.selected(p.Name()) {
			continue
		}
		if o.f != noMeta && needsAnnotation(p.Value()) {
			key(p.Name() + "@odata.type")
			b = appendJSONString(b, p.Value().Type.String())
		}
		key(p.Name())
		b = appendValue(b, p.Value())
	}
	// Selected properties the entity does not have come back as null.
	for _, s := range o.sel {
		switch s {
		case "PartitionKey", "RowKey", "Timestamp":
			continue
		}
		if _, ok := e.Property(s); !ok {
			key(s)
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// needsAnnotation reports whether a value's type cannot be inferred from
// its JSON form: Int64, DateTime, Guid, Binary, and Doubles written as
// strings (NaN, Infinity).
func needsAnnotation(v odata.Value) bool {
	switch v.Type {
	case odata.Int64, odata.DateTime, odata.Guid, odata.Binary:
		return true
	case odata.Double:
		return math.IsNaN(v.Float) || math.IsInf(v.Float, 0)
	}
	return false
}

func appendValue(b []byte, v odata.Value) []byte {
	switch v.Type {
	case odata.String:
		return appendJSONString(b, string(v.Bytes))
	case odata.Binary:
		return appendJSONString(b, base64.StdEncoding.EncodeToString(v.Bytes))
	case odata.Guid:
		return appendJSONString(b, odata.FormatGuid(v.Bytes))
	case odata.Boolean:
		return strconv.AppendBool(b, v.Int != 0)
	case odata.Int32:
		return strconv.AppendInt(b, v.Int, 10)
	case odata.Int64:
		b = append(b, '"')
		b = strconv.AppendInt(b, v.Int, 10)
		return append(b, '"')
	case odata.DateTime:
		return appendJSONString(b, odata.FormatDateTime(v.Time()))
	case odata.Double:
		f := v.Float
		switch {
		case math.IsNaN(f):
			return appendJSONString(b, "NaN")
		case math.IsInf(f, 1):
			return appendJSONString(b, "Infinity")
		case math.IsInf(f, -1):
			return appendJSONString(b, "-Infinity")
		}
		n := len(b)
		if a := math.Abs(f); a < 1e21 && (a >= 1e-6 || a == 0) {
			b = strconv.AppendFloat(b, f, 'f', -1, 64)
		} else {
			b = strconv.AppendFloat(b, f, 'g', -1, 64)
		}
		// An integral double keeps a decimal point so that clients do not
		// read it back as Int32.
		if !bytes.ContainsAny(b[n:], ".eE") {
			b = append(b, ".0"...)
		}
		return b
	}
	return append(b, "null"...)
}

// appendTable renders one table of a Query Tables feed or a Create
// Table response.
func (o *jsonOut) appendTable(b []byte, name string, single bool) []byte {
	b = append(b, '{')
	if o.f != noMeta {
		if single {
			b = append(b, `"odata.metadata":`...)
			b = appendJSONString(b, o.base+"/$metadata#Tables/@Element")
			b = append(b, ',')
		}
		if o.f == fullMeta {
			b = append(b, `"odata.type":`...)
			b = appendJSONString(b, o.account+".Tables")
			b = append(b, `,"odata.id":`...)
			b = appendJSONString(b, o.base+"/Tables('"+name+"')")
			b = append(b, `,"odata.editLink":`...)
			b = appendJSONString(b, "Tables('"+name+"')")
			b = append(b, ',')
		}
	}
	b = append(b, `"TableName":`...)
	b = appendJSONString(b, name)
	return append(b, '}')
}
