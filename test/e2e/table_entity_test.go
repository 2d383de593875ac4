package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestTableEntityTypesRoundTrip(t *testing.T) {
	e := tbStart(t)
	c := e.table("types")
	when := time.Date(2013, time.August, 2, 17, 37, 43, 900434800, time.UTC)
	in := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "pk", RowKey: "rk"},
		Properties: map[string]any{
			"Bool":     true,
			"Int32":    int32(-1234),
			"Int64":    aztables.EDMInt64(math.MaxInt64),
			"Double":   1234.1234,
			"String":   "tëst \"quoted\" \n line",
			"Guid":     aztables.EDMGUID("4185404a-5818-48c3-b9be-f217df0dba6f"),
			"DateTime": aztables.EDMDateTime(when),
			"Binary":   aztables.EDMBinary("Some\x00Binary"),
		},
	}
	add, err := c.AddEntity(e.ctx, tbJSON(t, in), nil)
	tbMust(t, err)
	if !strings.HasPrefix(string(add.ETag), `W/"datetime'`) {
		t.Fatalf("insert ETag %s", add.ETag)
	}
	get, err := c.GetEntity(e.ctx, "pk", "rk", nil)
	tbMust(t, err)
	if get.ETag != add.ETag {
		t.Fatalf("GetEntity ETag %s, insert ETag %s", get.ETag, add.ETag)
	}
	var out aztables.EDMEntity
	tbMust(t, json.Unmarshal(get.Value, &out))
	for k, v := range in.Properties {
		got := out.Properties[k]
		if k == "DateTime" {
			if !time.Time(got.(aztables.EDMDateTime)).Equal(when) {
				t.Fatalf("DateTime %v, want %v", time.Time(got.(aztables.EDMDateTime)), when)
			}
			continue
		}
		if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", v) {
			t.Fatalf("property %s: got %#v, want %#v", k, got, v)
		}
	}
	if out.ETag != string(add.ETag) || out.Metadata == "" {
		t.Fatalf("odata.etag %q, odata.metadata %q", out.ETag, out.Metadata)
	}
	// The Timestamp is the ETag's time.
	ts := time.Time(out.Timestamp)
	if want := strings.ReplaceAll(ts.Format("2006-01-02T15:04:05.0000000Z"), ":", "%3A"); !strings.Contains(string(add.ETag), want) {
		t.Fatalf("Timestamp %v does not match ETag %s", ts, add.ETag)
	}

	// Doubles: integral values stay Double, NaN and infinities use the
	// annotated string forms; GUIDs are normalised; Int64 may be sent as a
	// string; a null property is not stored.
	raw := `{"PartitionKey":"pk","RowKey":"special",` +
		`"Whole@odata.type":"Edm.Double","Whole":5,` +
		`"NaN@odata.type":"Edm.Double","NaN":"NaN",` +
		`"Inf@odata.type":"Edm.Double","Inf":"Infinity",` +
		`"NegInf@odata.type":"Edm.Double","NegInf":"-Infinity",` +
		`"G@odata.type":"Edm.Guid","G":"4185404A-5818-48C3-B9BE-F217DF0DBA6F",` +
		`"Big@odata.type":"Edm.Int64","Big":"-9223372036854775808",` +
		`"Large":3000000000,"Nothing":null}`
	r := e.raw(http.MethodPost, "types", map[string]string{"Content-Type": "application/json", "Accept": "application/json;odata=minimalmetadata"}, []byte(raw))
	if r.status != http.StatusCreated {
		t.Fatalf("insert special: %d %s", r.status, r.body)
	}
	body := string(r.body)
	for _, want := range []string{
		`"Whole":5.0`,
		`"NaN@odata.type":"Edm.Double","NaN":"NaN"`,
		`"Inf@odata.type":"Edm.Double","Inf":"Infinity"`,
		`"NegInf@odata.type":"Edm.Double","NegInf":"-Infinity"`,
		`"G@odata.type":"Edm.Guid","G":"4185404a-5818-48c3-b9be-f217df0dba6f"`,
		`"Big@odata.type":"Edm.Int64","Big":"-9223372036854775808"`,
		`"Large":3000000000.0`,
	} {
		if !strings.Contains(body, want) {
			t.Fatalf("insert response %s lacks %s", body, want)
		}
	}
	if strings.Contains(body, "Nothing") {
		t.Fatalf("null property stored: %s", body)
	}
	m, _ := e.tbGet(c, "pk", "special")
	if m["Whole"] != 5.0 || m["Big"] != "-9223372036854775808" || m["NaN"] != "NaN" {
		t.Fatalf("special read back %v", m)
	}
	// Filtering on the special values.
	got, _ := e.tbList(c, &aztables.ListEntitiesOptions{Filter: to.Ptr("Whole eq 5.0 and Inf gt 1e308 and NegInf lt -1e308 and G eq guid'4185404a-5818-48c3-b9be-f217df0dba6f' and Big lt -9223372036854775807L")})
	if tbRowKeys(got) != "special" {
		t.Fatalf("filter on special values matched %s", tbRowKeys(got))
	}
}

func TestTableEntityFormats(t *testing.T) {
	e := tbStart(t)
	c := e.table("fmt")
	e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "r", "N": 1, "S": "x", "B": true, "D": 1.5,
		"L": "12", "L@odata.type": "Edm.Int64", "T": "2020-01-02T03:04:05Z", "T@odata.type": "Edm.DateTime"})
	_, etag := e.tbGet(c, "p", "r")
	base := e.app.TableURL
	resp, err := c.GetEntity(e.ctx, "p", "r", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
	tbMust(t, err)
	var full map[string]any
	tbMust(t, json.Unmarshal(resp.Value, &full))
	ts := full["Timestamp"]
	tbSameMap(t, "full metadata", full, map[string]any{
		"odata.metadata":       base + "/$metadata#fmt/@Element",
		"odata.type":           "devstoreaccount1.fmt",
		"odata.id":             base + "/fmt(PartitionKey='p',RowKey='r')",
		"odata.etag":           string(etag),
		"odata.editLink":       "fmt(PartitionKey='p',RowKey='r')",
		"PartitionKey":         "p",
		"RowKey":               "r",
		"Timestamp@odata.type": "Edm.DateTime",
		"Timestamp":            ts,
		"N":                    1.0,
		"S":                    "x",
		"B":                    true,
		"D":                    1.5,
		"L@odata.type":         "Edm.Int64",
		"L":                    "12",
		"T@odata.type":         "Edm.DateTime",
		"T":                    "2020-01-02T03:04:05.0000000Z",
	})
	resp, err = c.GetEntity(e.ctx, "p", "r", &aztables.GetEntityOptions{Format: to.Ptr(aztables.MetadataFormatNone)})
	tbMust(t, err)
	var none map[string]any
	tbMust(t, json.Unmarshal(resp.Value, &none))
	tbSameMap(t, "no metadata", none, map[string]any{
		"PartitionKey": "p", "RowKey": "r", "Timestamp": ts, "N": 1.0, "S": "x", "B": true, "D": 1.5, "L": "12", "T": "2020-01-02T03:04:05.0000000Z",
	})
	// Minimal metadata, and $select (a missing selected property is null).
	r := e.raw(http.MethodGet, "fmt(PartitionKey='p',RowKey='r')?$select=S,L,Missing", map[string]string{"Accept": "application/json;odata=minimalmetadata"}, nil)
	if r.status != http.StatusOK || r.header.Get("ETag") != string(etag) {
		t.Fatalf("get: %d %v", r.status, r.header)
	}
	tbSameMap(t, "minimal $select", r.json(t), map[string]any{
		"odata.metadata": base + "/$metadata#fmt/@Element",
		"odata.etag":     string(etag),
		"S":              "x",
		"L@odata.type":   "Edm.Int64",
		"L":              "12",
		"Missing":        nil,
	})
	if ct := r.header.Get("Content-Type"); ct != "application/json;odata=minimalmetadata;streaming=true;charset=utf-8" {
		t.Fatalf("content type %s", ct)
	}
	r = e.raw(http.MethodGet, "fmt()", map[string]string{"Accept": "application/json"}, nil)
	if m := r.json(t); m["odata.metadata"] != base+"/$metadata#fmt" || len(m["value"].([]any)) != 1 {
		t.Fatalf("plain application/json query: %s", r.body)
	}
	r = e.raw(http.MethodGet, "fmt()", map[string]string{"Accept": "application/atom+xml"}, nil)
	if r.status != http.StatusUnsupportedMediaType || r.errCode(t) != "AtomFormatNotSupported" {
		t.Fatalf("atom: %d %s", r.status, r.body)
	}
}

func TestTableInsert(t *testing.T) {
	e := tbStart(t)
	c := e.table("ins")
	resp, err := c.AddEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "1", "V": 1}), &aztables.AddEntityOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
	tbMust(t, err)
	var m map[string]any
	tbMust(t, json.Unmarshal(resp.Value, &m))
	if m["odata.type"] != "devstoreaccount1.ins" || m["V"] != 1.0 || m["odata.etag"] != string(resp.ETag) {
		t.Fatalf("insert response %v", m)
	}
	_, err = c.AddEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "1", "V": 2}), nil)
	tbWant(t, err, http.StatusConflict, aztables.EntityAlreadyExists)
	got, _ := e.tbGet(c, "p", "1")
	if got["V"] != 1.0 {
		t.Fatalf("conflicting insert changed the entity: %v", got)
	}
	// Prefer: return-no-content.
	r := e.raw(http.MethodPost, "ins", map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}, []byte(`{"PartitionKey":"p","RowKey":"2"}`))
	if r.status != http.StatusNoContent || r.header.Get("Preference-Applied") != "return-no-content" || r.header.Get("ETag") == "" || len(r.body) != 0 {
		t.Fatalf("return-no-content: %d %v %q", r.status, r.header, r.body)
	}
	if loc := r.header.Get("Location"); loc != e.app.TableURL+"/ins(PartitionKey='p',RowKey='2')" {
		t.Fatalf("Location %s", loc)
	}
	// Keys with quotes, spaces, percent signs and non-ASCII survive the
	// URL; an empty RowKey is a valid key.
	for _, k := range [][2]string{{"it's a key", "100% ünïcode +plus"}, {"p", ""}, {"ぁ", "''"}} {
		e.tbAdd(c, map[string]any{"PartitionKey": k[0], "RowKey": k[1], "K": k[0] + "|" + k[1]})
		got, _ := e.tbGet(c, k[0], k[1])
		if got["K"] != k[0]+"|"+k[1] || got["PartitionKey"] != k[0] || got["RowKey"] != k[1] {
			t.Fatalf("key %q/%q read back %v", k[0], k[1], got)
		}
		_, err := c.DeleteEntity(e.ctx, k[0], k[1], nil)
		tbMust(t, err)
	}
	// A missing table.
	_, err = e.svc.NewClient("nosuch").AddEntity(e.ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
	tbWant(t, err, http.StatusNotFound, aztables.TableNotFound)
	_, err = e.svc.NewClient("nosuch").GetEntity(e.ctx, "p", "r", nil)
	tbWant(t, err, http.StatusNotFound, aztables.TableNotFound)
	_, err = c.GetEntity(e.ctx, "p", "nosuch", nil)
	tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
}

func TestTableUpdateMergeDelete(t *testing.T) {
	e := tbStart(t)
	c := e.table("upd")
	add := e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": 1, "B": "b"})
	stale := add.ETag

	// Replace with the current ETag: B disappears.
	up, err := c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": 2, "C": "c"}), &aztables.UpdateEntityOptions{IfMatch: &add.ETag, UpdateMode: aztables.UpdateModeReplace})
	tbMust(t, err)
	if up.ETag == add.ETag || up.ETag == "" {
		t.Fatalf("update ETag %s after %s", up.ETag, add.ETag)
	}
	got, etag := e.tbGet(c, "p", "r")
	if etag != up.ETag || got["A"] != 2.0 || got["C"] != "c" || got["B"] != nil {
		t.Fatalf("after replace %v %s", got, etag)
	}
	// A stale ETag fails, for replace, merge and delete alike.
	_, err = c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), &aztables.UpdateEntityOptions{IfMatch: &stale, UpdateMode: aztables.UpdateModeReplace})
	tbWant(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
	_, err = c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), &aztables.UpdateEntityOptions{IfMatch: &stale, UpdateMode: aztables.UpdateModeMerge})
	tbWant(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)
	_, err = c.DeleteEntity(e.ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &stale})
	tbWant(t, err, http.StatusPreconditionFailed, aztables.UpdateConditionNotSatisfied)

	// Merge: existing properties keep their place, new ones are added.
	mg, err := c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": 3, "D": true}), &aztables.UpdateEntityOptions{IfMatch: &up.ETag, UpdateMode: aztables.UpdateModeMerge})
	tbMust(t, err)
	got, etag = e.tbGet(c, "p", "r")
	if etag != mg.ETag || got["A"] != 3.0 || got["C"] != "c" || got["D"] != true {
		t.Fatalf("after merge %v", got)
	}
	// If-Match: * matches any existing entity, and only an existing one.
	star := azcore.ETagAny
	_, err = c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "E": 1}), &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: aztables.UpdateModeMerge})
	tbMust(t, err)
	for _, mode := range []aztables.UpdateMode{aztables.UpdateModeMerge, aztables.UpdateModeReplace} {
		_, err = c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "missing"}), &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: mode})
		tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
		_, err = c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "missing"}), &aztables.UpdateEntityOptions{IfMatch: &stale, UpdateMode: mode})
		tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	}
	// A malformed ETag is 400.
	bad := azcore.ETag(`"0x8D"`)
	_, err = c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), &aztables.UpdateEntityOptions{IfMatch: &bad, UpdateMode: aztables.UpdateModeReplace})
	tbWant(t, err, http.StatusBadRequest, aztables.InvalidInput)

	// Upserts need no condition: they create, replace or merge.
	_, err = c.UpsertEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "u", "X": 1, "Y": 1}), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	tbMust(t, err)
	_, err = c.UpsertEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "u", "Y": 2, "Z": 2}), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	tbMust(t, err)
	got, _ = e.tbGet(c, "p", "u")
	if got["X"] != 1.0 || got["Y"] != 2.0 || got["Z"] != 2.0 {
		t.Fatalf("after upsert merge %v", got)
	}
	_, err = c.UpsertEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "u", "Z": 3}), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
	tbMust(t, err)
	got, _ = e.tbGet(c, "p", "u")
	if got["X"] != nil || got["Z"] != 3.0 {
		t.Fatalf("after upsert replace %v", got)
	}
	_, err = c.UpsertEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "m", "Q": 1}), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
	tbMust(t, err)

	// Delete: current ETag, then missing.
	_, etag = e.tbGet(c, "p", "r")
	_, err = c.DeleteEntity(e.ctx, "p", "r", &aztables.DeleteEntityOptions{IfMatch: &etag})
	tbMust(t, err)
	_, err = c.DeleteEntity(e.ctx, "p", "r", nil)
	tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	_, err = c.GetEntity(e.ctx, "p", "r", nil)
	tbWant(t, err, http.StatusNotFound, aztables.ResourceNotFound)
	r := e.raw(http.MethodDelete, "upd(PartitionKey='p',RowKey='u')", nil, nil)
	if r.status != http.StatusBadRequest || r.errCode(t) != "MissingRequiredHeader" {
		t.Fatalf("delete without If-Match: %d %s", r.status, r.body)
	}
}

func TestTableXHTTPMethod(t *testing.T) {
	e := tbStart(t)
	c := e.table("xmeth")
	e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "r", "A": 1})
	r := e.raw(http.MethodPost, "xmeth(PartitionKey='p',RowKey='r')", map[string]string{"Content-Type": "application/json", "X-HTTP-Method": "MERGE", "If-Match": "*"}, []byte(`{"B":2}`))
	if r.status != http.StatusNoContent || r.header.Get("ETag") == "" {
		t.Fatalf("POST + X-HTTP-Method MERGE: %d %s", r.status, r.body)
	}
	r = e.raw("MERGE", "xmeth(PartitionKey='p',RowKey='r')", map[string]string{"Content-Type": "application/json", "If-Match": "*"}, []byte(`{"C":3}`))
	if r.status != http.StatusNoContent {
		t.Fatalf("MERGE verb: %d %s", r.status, r.body)
	}
	got, _ := e.tbGet(c, "p", "r")
	if got["A"] != 1.0 || got["B"] != 2.0 || got["C"] != 3.0 {
		t.Fatalf("after merges %v", got)
	}
	r = e.raw(http.MethodPost, "xmeth(PartitionKey='p',RowKey='r')", map[string]string{"X-HTTP-Method": "DELETE", "If-Match": "*"}, nil)
	if r.status != http.StatusNoContent {
		t.Fatalf("POST + X-HTTP-Method DELETE: %d %s", r.status, r.body)
	}
	for _, tc := range []struct {
		method, xm, code string
	}{
		{http.MethodPut, "MERGE", "XMethodNotUsingPost"},
		{http.MethodPost, "FROB", "XMethodIncorrectValue"},
		{http.MethodPost, "MERGE, DELETE", "XMethodIncorrectCount"},
	} {
		r = e.raw(tc.method, "xmeth(PartitionKey='p',RowKey='r')", map[string]string{"X-HTTP-Method": tc.xm}, []byte(`{}`))
		if r.status != http.StatusBadRequest || r.errCode(t) != tc.code {
			t.Fatalf("%s X-HTTP-Method %s: %d %s", tc.method, tc.xm, r.status, r.body)
		}
	}
}

func TestTableETagUniqueInOneTick(t *testing.T) {
	e := tbStart(t)
	c := e.table("tick")
	// The fake clock does not move: every write lands in the same tick.
	seen := map[azcore.ETag]bool{}
	add := e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "r"})
	seen[add.ETag] = true
	etag := add.ETag
	for i := 0; i < 20; i++ {
		resp, err := c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "I": i}), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: aztables.UpdateModeReplace})
		tbMust(t, err)
		if seen[resp.ETag] {
			t.Fatalf("ETag %s reused", resp.ETag)
		}
		seen[resp.ETag] = true
		etag = resp.ETag
	}
	// Delete and re-insert in the same tick: a new ETag.
	_, err := c.DeleteEntity(e.ctx, "p", "r", nil)
	tbMust(t, err)
	add = e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "r"})
	if seen[add.ETag] {
		t.Fatalf("ETag %s reissued after delete", add.ETag)
	}
	// After the clock moves on, Timestamps follow it.
	e.clock.Advance(time.Minute)
	add = e.tbAdd(c, map[string]any{"PartitionKey": "p", "RowKey": "later"})
	got, _ := e.tbGet(c, "p", "later")
	ts, err := time.Parse(time.RFC3339Nano, got["Timestamp"].(string))
	tbMust(t, err)
	if d := ts.Sub(e.clock.Now().Truncate(100 * time.Nanosecond)); d < 0 || d > time.Millisecond {
		t.Fatalf("Timestamp %v, clock %v", ts, e.clock.Now())
	}
	if !strings.Contains(string(add.ETag), url.PathEscape(ts.Format("2006-01-02T15:04:05.0000000Z"))[:10]) {
		t.Fatalf("ETag %s, Timestamp %v", add.ETag, ts)
	}
}

func TestTableEntityLimits(t *testing.T) {
	e := tbStart(t)
	c := e.table("limits")
	add := func(m map[string]any) error {
		_, err := c.AddEntity(e.ctx, tbJSON(t, m), nil)
		return err
	}
	base := func() map[string]any { return map[string]any{"PartitionKey": "p", "RowKey": "r"} }

	m := base()
	for i := 0; i < 252; i++ {
		m[fmt.Sprintf("P%03d", i)] = i
	}
	tbMust(t, add(m))
	m["RowKey"] = "r2"
	m["P252"] = 1
	tbWant(t, add(m), http.StatusBadRequest, aztables.TooManyProperties)

	m = base()
	m[strings.Repeat("n", 256)] = 1
	tbWant(t, add(m), http.StatusBadRequest, aztables.PropertyNameTooLong)
	m = base()
	m[strings.Repeat("n", 255)] = 1
	m["RowKey"] = "long-name"
	tbMust(t, add(m))
	for _, name := range []string{"1abc", "a-b", "a b", "a.b"} {
		m = base()
		m["RowKey"] = "bad-name"
		m[name] = 1
		tbWant(t, add(m), http.StatusBadRequest, aztables.PropertyNameInvalid)
	}
	m = base()
	m["RowKey"] = "odata"
	m["odata"] = 1 // only "odata." prefixed names are annotations
	m["_ünï_1"] = 2
	tbMust(t, add(m))

	// A string is at most 32K UTF-16 characters; an entity at most 1 MiB.
	m = base()
	m["S"] = strings.Repeat("x", 32*1024+1)
	tbWant(t, add(m), http.StatusBadRequest, aztables.PropertyValueTooLarge)
	m = base()
	m["RowKey"] = "big"
	for i := 0; i < 15; i++ {
		m[fmt.Sprint("S", i)] = strings.Repeat("x", 32*1024)
	}
	tbMust(t, add(m)) // about 960 KiB
	m["RowKey"] = "toobig"
	m["S15"] = strings.Repeat("x", 32*1024)
	tbWant(t, add(m), http.StatusBadRequest, aztables.EntityTooLarge)
	// Merging can also make an entity too large.
	star := azcore.ETagAny
	_, err := c.UpdateEntity(e.ctx, tbJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "big", "S15": strings.Repeat("x", 32*1024), "S16": strings.Repeat("x", 32*1024)}), &aztables.UpdateEntityOptions{IfMatch: &star, UpdateMode: aztables.UpdateModeMerge})
	tbWant(t, err, http.StatusBadRequest, aztables.EntityTooLarge)

	// Keys: at most 1 KiB, without / \ # ? or control characters.
	for _, k := range []string{"a/b", `a\b`, "a#b", "a?b", "a\tb", "a\u0085b"} {
		m = base()
		m["PartitionKey"] = k
		tbWant(t, add(m), http.StatusBadRequest, aztables.InvalidInput)
		m = base()
		m["RowKey"] = k
		tbWant(t, add(m), http.StatusBadRequest, aztables.InvalidInput)
	}
	m = base()
	m["RowKey"] = strings.Repeat("k", 513)
	tbWant(t, add(m), http.StatusBadRequest, aztables.PropertyValueTooLarge)
	m["RowKey"] = strings.Repeat("k", 512)
	tbMust(t, add(m))

	// Body errors, sent raw.
	for _, tc := range []struct{ body, code string }{
		{`{"PartitionKey":"p","RowKey":"d","A":1,"A":2}`, "DuplicatePropertiesSpecified"},
		{`{"RowKey":"x"}`, "PropertiesNeedValue"},
		{`{"PartitionKey":"p","RowKey":"x","L@odata.type":"Edm.Int64","L":"abc"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"x","L@odata.type":"Edm.Int32","L":3000000000}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"x","G@odata.type":"Edm.Guid","G":"nope"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"x","B@odata.type":"Edm.Binary","B":"!!"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"x","T@odata.type":"Edm.DateTime","T":"yesterday"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"x","X@odata.type":"Edm.Decimal","X":"1"}`, "InvalidInput"},
		{`{"PartitionKey":"p","RowKey":"x","O":{"nested":1}}`, "InvalidInput"},
		{`{"PartitionKey":1,"RowKey":"x"}`, "InvalidInput"},
		{`[1,2]`, "InvalidInput"},
		{`{"PartitionKey":"p"`, "InvalidInput"},
	} {
		r := e.raw(http.MethodPost, "limits", map[string]string{"Content-Type": "application/json"}, []byte(tc.body))
		if r.status != http.StatusBadRequest || r.errCode(t) != tc.code {
			t.Fatalf("body %s: %d %s", tc.body, r.status, r.body)
		}
	}
	r := e.raw(http.MethodPost, "limits", map[string]string{"Content-Type": "application/json"}, []byte(`{"PartitionKey":"p","RowKey":"x","S":"`+strings.Repeat("x", 5<<20)+`"}`))
	if r.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("5 MiB body: %d %.200s", r.status, r.body)
	}
}
