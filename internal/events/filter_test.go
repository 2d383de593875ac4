package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/cerulean-storage/cerulean/internal/changelog"
)

// filterEvent is the event the operator table is evaluated on.
const filterEvent = `{"topic":"/subscriptions/x/storageAccounts/acct","subject":"/blobServices/default/containers/Images/blobs/Cat.JPG",
"eventType":"Microsoft.Storage.BlobCreated","id":"id-1","dataVersion":"",
"data":{"api":"PutBlob","contentLength":524288,"contentType":"image/jpeg","blobType":"BlockBlob","recursive":"true",
"flag":true,"nothing":null,"tags":["Red","green"],"sizes":[1,50,700],"mixed":[3,"three"],
"storageDiagnostics":{"batchId":"b-1"}}}`

// TestAdvancedFilterOperators: each of Event Grid's operators on a
// single value, on arrays with and without
// enableAdvancedFilteringOnArrays, on values of another type, and on
// missing and null keys; string comparisons ignore case; keys are
// found whatever their case.
func TestAdvancedFilterOperators(t *testing.T) {
	var ev map[string]any
	if err := json.Unmarshal([]byte(filterEvent), &ev); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		filter string
		arrays bool
		want   bool
	}{
		// Numbers.
		{`{"operatorType":"NumberIn","key":"data.contentLength","values":[1,524288]}`, false, true},
		{`{"operatorType":"NumberIn","key":"data.contentLength","values":[1,2]}`, false, false},
		{`{"operatorType":"NumberNotIn","key":"data.contentLength","values":[1,2]}`, false, true},
		{`{"operatorType":"NumberNotIn","key":"data.contentLength","values":[524288]}`, false, false},
		{`{"operatorType":"NumberLessThan","key":"data.contentLength","value":524289}`, false, true},
		{`{"operatorType":"NumberLessThan","key":"data.contentLength","value":524288}`, false, false},
		{`{"operatorType":"NumberGreaterThan","key":"data.contentLength","value":1024}`, false, true},
		{`{"operatorType":"NumberGreaterThan","key":"data.contentLength","value":524288}`, false, false},
		{`{"operatorType":"NumberLessThanOrEquals","key":"data.contentLength","value":524288}`, false, true},
		{`{"operatorType":"NumberLessThanOrEquals","key":"data.contentLength","value":524287}`, false, false},
		{`{"operatorType":"NumberGreaterThanOrEquals","key":"data.contentLength","value":524288}`, false, true},
		{`{"operatorType":"NumberGreaterThanOrEquals","key":"data.contentLength","value":524289}`, false, false},
		{`{"operatorType":"NumberInRange","key":"data.contentLength","values":[[0,10],[500000,600000]]}`, false, true},
		{`{"operatorType":"NumberInRange","key":"data.contentLength","values":[[0,10]]}`, false, false},
		{`{"operatorType":"NumberNotInRange","key":"data.contentLength","values":[[0,10]]}`, false, true},
		{`{"operatorType":"NumberNotInRange","key":"data.contentLength","values":[[524288,524288]]}`, false, false},
		// Booleans.
		{`{"operatorType":"BoolEquals","key":"data.flag","value":true}`, false, true},
		{`{"operatorType":"BoolEquals","key":"data.flag","value":false}`, false, false},
		// Strings, case-insensitively, on envelope and data keys.
		{`{"operatorType":"StringIn","key":"data.api","values":["putblob","PutBlockList"]}`, false, true},
		{`{"operatorType":"StringIn","key":"data.api","values":["DeleteBlob"]}`, false, false},
		{`{"operatorType":"StringNotIn","key":"data.api","values":["DeleteBlob"]}`, false, true},
		{`{"operatorType":"StringNotIn","key":"data.api","values":["PUTBLOB"]}`, false, false},
		{`{"operatorType":"StringBeginsWith","key":"subject","values":["/blobservices/default/containers/images/"]}`, false, true},
		{`{"operatorType":"StringBeginsWith","key":"subject","values":["/x"]}`, false, false},
		{`{"operatorType":"StringNotBeginsWith","key":"subject","values":["/x"]}`, false, true},
		{`{"operatorType":"StringNotBeginsWith","key":"subject","values":["/BLOBSERVICES"]}`, false, false},
		{`{"operatorType":"StringEndsWith","key":"Subject","values":[".png",".jpg"]}`, false, true},
		{`{"operatorType":"StringEndsWith","key":"subject","values":[".png"]}`, false, false},
		{`{"operatorType":"StringNotEndsWith","key":"subject","values":[".png"]}`, false, true},
		{`{"operatorType":"StringNotEndsWith","key":"subject","values":[".jpg"]}`, false, false},
		{`{"operatorType":"StringContains","key":"EventType","values":["blobcreated"]}`, false, true},
		{`{"operatorType":"StringContains","key":"eventType","values":["Deleted"]}`, false, false},
		{`{"operatorType":"StringNotContains","key":"eventType","values":["Deleted"]}`, false, true},
		{`{"operatorType":"StringNotContains","key":"eventType","values":["storage"]}`, false, false},
		{`{"operatorType":"StringIn","key":"data.storageDiagnostics.batchId","values":["B-1"]}`, false, true},
		{`{"operatorType":"StringIn","key":"ID","values":["id-1"]}`, false, true},
		// Null and undefined.
		{`{"operatorType":"IsNullOrUndefined","key":"data.nothing"}`, false, true},
		{`{"operatorType":"IsNullOrUndefined","key":"data.absent"}`, false, true},
		{`{"operatorType":"IsNullOrUndefined","key":"data.api"}`, false, false},
		{`{"operatorType":"IsNotNull","key":"data.api"}`, false, true},
		{`{"operatorType":"IsNotNull","key":"data.nothing"}`, false, false},
		{`{"operatorType":"IsNotNull","key":"data.api.deeper"}`, false, false},
		// A missing key or a value of another type: positive operators
		// do not match, Not operators do.
		{`{"operatorType":"StringIn","key":"data.absent","values":["x"]}`, false, false},
		{`{"operatorType":"StringNotIn","key":"data.absent","values":["x"]}`, false, true},
		{`{"operatorType":"NumberGreaterThan","key":"data.api","value":0}`, false, false},
		{`{"operatorType":"NumberNotIn","key":"data.api","values":[0]}`, false, true},
		{`{"operatorType":"StringIn","key":"data.contentLength","values":["524288"]}`, false, false},
		{`{"operatorType":"BoolEquals","key":"data.recursive","value":true}`, false, false},
		// Arrays: only with enableAdvancedFilteringOnArrays; any element
		// matches a positive operator, any matching element fails a Not.
		{`{"operatorType":"StringIn","key":"data.tags","values":["RED"]}`, false, false},
		{`{"operatorType":"StringIn","key":"data.tags","values":["RED"]}`, true, true},
		{`{"operatorType":"StringNotIn","key":"data.tags","values":["red"]}`, true, false},
		{`{"operatorType":"StringNotIn","key":"data.tags","values":["blue"]}`, true, true},
		{`{"operatorType":"NumberGreaterThan","key":"data.sizes","value":500}`, true, true},
		{`{"operatorType":"NumberGreaterThan","key":"data.sizes","value":700}`, true, false},
		{`{"operatorType":"NumberNotInRange","key":"data.sizes","values":[[40,60]]}`, true, false},
		{`{"operatorType":"NumberInRange","key":"data.sizes","values":[[40,60]]}`, true, true},
		{`{"operatorType":"NumberIn","key":"data.mixed","values":[3]}`, true, true},
		{`{"operatorType":"StringIn","key":"data.mixed","values":["THREE"]}`, true, true},
		{`{"operatorType":"IsNotNull","key":"data.tags"}`, false, true},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		var f AdvancedFilter
		if err := json.Unmarshal([]byte(c.filter), &f); err != nil {
			t.Fatal(err)
		}
		seen[f.OperatorType+" "+map[bool]string{true: "match", false: "no match"}[c.want]] = true
		if err := f.parse(); err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got := f.match(ev, c.arrays); got != c.want {
			t.Errorf("%s (arrays %v): %v, want %v", c.filter, c.arrays, got, c.want)
		}
	}
	// Every operator has a case that matches and one that does not.
	for op := range operators {
		if !seen[op+" match"] || !seen[op+" no match"] {
			t.Errorf("operator %s: no case for both outcomes", op)
		}
	}
}

// TestAdvancedFiltersAnd: a subscription's filters are ANDed, on the
// event as formatted for it.
func TestAdvancedFiltersAnd(t *testing.T) {
	s := testSub("adv")
	s.Filter.AdvancedFilters = []AdvancedFilter{
		{OperatorType: "StringIn", Key: "data.api", Values: json.RawMessage(`["PutBlob"]`)},
		{OperatorType: "NumberGreaterThan", Key: "data.contentLength", Value: json.RawMessage(`100`)},
	}
	if err := s.ParseFilters(); err != nil {
		t.Fatal(err)
	}
	rec := func(api string, n int64) changelog.Record {
		return changelog.Record{Seq: 1, ID: "i", EventType: changelog.BlobCreated, Subject: changelog.Subject("c", "b"), EventTime: time.Now(),
			Data: changelog.Data{API: api, ContentLength: n, BlobType: "BlockBlob"}}
	}
	for _, c := range []struct {
		api  string
		n    int64
		want bool
	}{{"PutBlob", 101, true}, {"PutBlob", 100, false}, {"PutBlockList", 101, false}} {
		if _, ok := s.Format(rec(c.api, c.n), URLs{}); ok != c.want {
			t.Errorf("%s %d: selected %v, want %v", c.api, c.n, ok, c.want)
		}
	}
}

// TestAdvancedFilterRefusals: an invalid advanced filter refuses the
// subscriptions file with a message naming the filter.
func TestAdvancedFilterRefusals(t *testing.T) {
	file := func(filters string, extra string) []byte {
		return []byte(`[{"name":"adv","account":"acct","endpoint":{"type":"webhook","url":"http://127.0.0.1:1/"},"filter":{"advancedFilters":` + filters + extra + `}}]`)
	}
	ok := `[{"operatorType":"NumberInRange","key":"data.contentLength","values":[[1,2]]},{"operatorType":"IsNotNull","key":"subject"}]`
	if _, err := ParseSubscriptions(file(ok, `,"enableAdvancedFilteringOnArrays":true`), nil); err != nil {
		t.Fatalf("a valid file: %v", err)
	}
	many := func(n int, one string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(one+",", n), ",") + "]"
	}
	for _, c := range []struct{ filters, want string }{
		{`[{"operatorType":"NumberBetween","key":"data.contentLength","value":1}]`, "operatorType"},
		{`[{"operatorType":"NumberIn","key":"","values":[1]}]`, "key"},
		{`[{"operatorType":"NumberIn","key":"data..x","values":[1]}]`, "key"},
		{`[{"operatorType":"NumberIn","key":"data.contentLength","value":1}]`, `takes "values"`},
		{`[{"operatorType":"NumberIn","key":"data.contentLength","values":[]}]`, "non-empty array of numbers"},
		{`[{"operatorType":"NumberIn","key":"data.contentLength","values":["1"]}]`, "non-empty array of numbers"},
		{`[{"operatorType":"NumberLessThan","key":"data.contentLength","values":[1]}]`, `takes "value"`},
		{`[{"operatorType":"NumberLessThan","key":"data.contentLength","value":"1"}]`, "must be a number"},
		{`[{"operatorType":"NumberInRange","key":"data.contentLength","values":[[2,1]]}]`, "low <= high"},
		{`[{"operatorType":"NumberInRange","key":"data.contentLength","values":[[1,2,3]]}]`, "low <= high"},
		{`[{"operatorType":"BoolEquals","key":"data.flag","value":"true"}]`, "true or false"},
		{`[{"operatorType":"StringIn","key":"data.api","values":[1]}]`, "non-empty array of strings"},
		{`[{"operatorType":"StringIn","key":"data.api","values":[null]}]`, "strings of at most 512"},
		{`[{"operatorType":"StringIn","key":"data.api","values":["` + strings.Repeat("x", 513) + `"]}]`, "at most 512"},
		{`[{"operatorType":"IsNotNull","key":"data.api","value":1}]`, "takes no value"},
		{`[{"operatorType":"StringIn","key":"data.api","values":["a"],"extra":1}]`, "unknown field"},
		{many(26, `{"operatorType":"IsNotNull","key":"subject"}`), "26 advanced filters, at most 25"},
		{many(13, `{"operatorType":"StringIn","key":"subject","values":["a","b"]}`), "26 values in all, at most 25"},
	} {
		_, err := ParseSubscriptions(file(c.filters, ""), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.120s: %v, want an error saying %q", c.filters, err, c.want)
		}
	}
}

// FuzzParseAdvancedFilters: whatever a subscriptions file's filter
// holds, parsing does not panic, and an accepted filter evaluates on
// an event without panicking and keeps Event Grid's limits.
func FuzzParseAdvancedFilters(f *testing.F) {
	for _, seed := range []string{
		`[{"operatorType":"NumberIn","key":"data.contentLength","values":[1,2]}]`,
		`[{"operatorType":"NumberInRange","key":"data.sizes","values":[[1,2],[3,4]]}]`,
		`[{"operatorType":"StringNotContains","key":"subject","values":["a"]},{"operatorType":"IsNullOrUndefined","key":"data.x"}]`,
		`[{"operatorType":"BoolEquals","key":"data.flag","value":true}]`,
		`[{"operatorType":"NumberLessThan","key":"data.mixed","value":1e308}]`,
		`[]`, `null`, `{}`, `[{"operatorType":"StringIn","key":"a.b.c","values":["x"]}]`,
	} {
		f.Add(seed, true)
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(filterEvent), &ev); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, filters string, arrays bool) {
		data := []byte(`[{"name":"fuzz","account":"acct","endpoint":{"type":"webhook","url":"http://127.0.0.1:1/"},"filter":{"advancedFilters":` + filters + `}}]`)
		subs, err := ParseSubscriptions(data, nil)
		if err != nil {
			return
		}
		fs := subs[0].Filter.AdvancedFilters
		if len(fs) > maxAdvancedFilters {
			t.Fatalf("accepted %d filters", len(fs))
		}
		total := 0
		for i := range fs {
			total += fs[i].count()
			fs[i].match(ev, arrays)
		}
		if total > maxFilterValues {
			t.Fatalf("accepted %d values", total)
		}
		_ = matchAdvanced(fs, arrays, []byte(filterEvent))
	})
}
