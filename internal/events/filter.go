package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Filter selects the events delivered (the Event Grid page "Understand event
// filtering for Event Grid subscriptions": event types, subject filters
// and advanced filters, filter.go).
type Filter struct {
	// IncludedEventTypes, full names (Microsoft.Storage.BlobCreated);
	// empty: all.
	IncludedEventTypes     []string `json:"includedEventTypes,omitempty"`
	SubjectBeginsWith      string   `json:"subjectBeginsWith,omitempty"`
	SubjectEndsWith        string   `json:"subjectEndsWith,omitempty"`
	IsSubjectCaseSensitive bool     `json:"isSubjectCaseSensitive,omitempty"`
	// AdvancedFilters must all pass; EnableAdvancedFilteringOnArrays
	// compares a key holding an array element by element.
	AdvancedFilters                 []AdvancedFilter `json:"advancedFilters,omitempty"`
	EnableAdvancedFilteringOnArrays bool             `json:"enableAdvancedFilteringOnArrays,omitempty"`
}

// Advanced filters, as the Event Grid page "Understand event filtering for
// Event Grid subscriptions" (https://learn.microsoft.com/en-us/azure/event-grid/event-filtering,
// "Advanced filtering") describes them: each names an operator, a key
// (a field of the event: subject, eventType, id, data.api,
// data.contentLength, data.storageDiagnostics.batchId, ...) and the
// value or values it compares the key's value with. A subscription's
// filters are ANDed; the values of one filter are ORed. String
// comparisons ignore case. A key whose value is an array is compared
// element by element only with enableAdvancedFilteringOnArrays (then a
// positive operator matches when any element does, and a Not operator
// fails when any element matches its positive counterpart, as the
// page's pseudo-code has it); without it an array is a value of no
// operator's type. A value of another type than the operator's is
// ignored, so that a positive operator does not match it and a Not
// operator does; so is a missing or null key (inferred from the
// pseudo-code, which only ever fails a Not operator on a value that
// matches), except for IsNullOrUndefined and IsNotNull, which test
// exactly that.

// The operators.
const (
	opNumberIn                  = "NumberIn"
	opNumberNotIn               = "NumberNotIn"
	opNumberLessThan            = "NumberLessThan"
	opNumberGreaterThan         = "NumberGreaterThan"
	opNumberLessThanOrEquals    = "NumberLessThanOrEquals"
	opNumberGreaterThanOrEquals = "NumberGreaterThanOrEquals"
	opNumberInRange             = "NumberInRange"
	opNumberNotInRange          = "NumberNotInRange"
	opBoolEquals                = "BoolEquals"
	opStringIn                  = "StringIn"
	opStringNotIn               = "StringNotIn"
	opStringBeginsWith          = "StringBeginsWith"
	opStringNotBeginsWith       = "StringNotBeginsWith"
	opStringEndsWith            = "StringEndsWith"
	opStringNotEndsWith         = "StringNotEndsWith"
	opStringContains            = "StringContains"
	opStringNotContains         = "StringNotContains"
	opIsNullOrUndefined         = "IsNullOrUndefined"
	opIsNotNull                 = "IsNotNull"
)

// Event Grid's limits ("Advanced filtering", "Limitations"): 25
// advanced filters and 25 filter values across all of a subscription's
// filters, 512 characters per string value.
const (
	maxAdvancedFilters = 25
	maxFilterValues    = 25
	maxFilterString    = 512
	maxFilterKey       = 512 // (inferred: keys are strings too)
)

// operand is the kind of value an operator takes.
type operand int

const (
	numberList operand = iota // values: [1, 2]
	number                    // value: 3
	rangeList                 // values: [[1, 2], [5, 9]]
	boolean                   // value: true
	stringList                // values: ["a", "b"]
	none                      // neither
)

// operators maps each operator to its operand and, for a Not operator,
// its positive counterpart.
var operators = map[string]struct {
	operand  operand
	positive string // "" : the operator is positive
}{
	opNumberIn: {numberList, ""}, opNumberNotIn: {numberList, opNumberIn},
	opNumberLessThan: {number, ""}, opNumberGreaterThan: {number, ""},
	opNumberLessThanOrEquals: {number, ""}, opNumberGreaterThanOrEquals: {number, ""},
	opNumberInRange: {rangeList, ""}, opNumberNotInRange: {rangeList, opNumberInRange},
	opBoolEquals: {boolean, ""},
	opStringIn:   {stringList, ""}, opStringNotIn: {stringList, opStringIn},
	opStringBeginsWith: {stringList, ""}, opStringNotBeginsWith: {stringList, opStringBeginsWith},
	opStringEndsWith: {stringList, ""}, opStringNotEndsWith: {stringList, opStringEndsWith},
	opStringContains: {stringList, ""}, opStringNotContains: {stringList, opStringContains},
	opIsNullOrUndefined: {none, ""}, opIsNotNull: {none, ""},
}

// AdvancedFilter is one advanced filter of a subscription, as the
// subscriptions file writes it: {"operatorType": "NumberGreaterThan",
// "key": "data.contentLength", "value": 1024}.
type AdvancedFilter struct {
	OperatorType string          `json:"operatorType"`
	Key          string          `json:"key"`
	Value        json.RawMessage `json:"value,omitempty"`
	Values       json.RawMessage `json:"values,omitempty"`

	// The parsed operand.
	nums   []float64
	ranges [][2]float64
	strs   []string // lower case
	b      bool
}

// count is how many filter values f has, toward maxFilterValues (a
// range counts one).
func (f *AdvancedFilter) count() int {
	switch operators[f.OperatorType].operand {
	case numberList:
		return len(f.nums)
	case rangeList:
		return len(f.ranges)
	case stringList:
		return len(f.strs)
	case number, boolean:
		return 1
	}
	return 0
}

// parse checks f and reads its operand.
func (f *AdvancedFilter) parse() error {
	op, ok := operators[f.OperatorType]
	if !ok {
		return fmt.Errorf("operatorType %q is not a known advanced filter operator", f.OperatorType)
	}
	if f.Key == "" || len(f.Key) > maxFilterKey || strings.HasPrefix(f.Key, ".") || strings.HasSuffix(f.Key, ".") || strings.Contains(f.Key, "..") {
		return fmt.Errorf("key %q: want a field such as subject or data.api", f.Key)
	}
	has := func(raw json.RawMessage) bool { return len(bytes.TrimSpace(raw)) > 0 }
	switch op.operand {
	case number, boolean:
		if has(f.Values) || !has(f.Value) {
			return errors.New(`takes "value", not "values"`)
		}
	case none:
		if has(f.Values) || has(f.Value) {
			return errors.New("takes no value")
		}
		return nil
	default:
		if has(f.Value) || !has(f.Values) {
			return errors.New(`takes "values" (an array), not "value"`)
		}
	}
	switch op.operand {
	case number:
		var n float64
		if err := json.Unmarshal(f.Value, &n); err != nil || !finite(n) {
			return errors.New("value must be a number")
		}
		f.nums = []float64{n}
	case boolean:
		if err := json.Unmarshal(f.Value, &f.b); err != nil {
			return errors.New("value must be true or false")
		}
	case numberList:
		if err := json.Unmarshal(f.Values, &f.nums); err != nil || len(f.nums) == 0 {
			return errors.New("values must be a non-empty array of numbers")
		}
		for _, n := range f.nums {
			if !finite(n) {
				return errors.New("values must be finite numbers")
			}
		}
	case rangeList:
		var rs [][]float64
		if err := json.Unmarshal(f.Values, &rs); err != nil || len(rs) == 0 {
			return errors.New("values must be a non-empty array of [low, high] ranges")
		}
		for _, r := range rs {
			if len(r) != 2 || !finite(r[0]) || !finite(r[1]) || r[0] > r[1] {
				return fmt.Errorf("range %v: want [low, high] with low <= high", r)
			}
			f.ranges = append(f.ranges, [2]float64{r[0], r[1]})
		}
	case stringList:
		var ss []*string
		if err := json.Unmarshal(f.Values, &ss); err != nil || len(ss) == 0 {
			return errors.New("values must be a non-empty array of strings")
		}
		f.strs = f.strs[:0]
		for _, s := range ss {
			if s == nil || len(*s) > maxFilterString {
				return fmt.Errorf("values must be strings of at most %d characters", maxFilterString)
			}
			f.strs = append(f.strs, strings.ToLower(*s))
		}
	}
	return nil
}

func finite(n float64) bool { return !math.IsNaN(n) && !math.IsInf(n, 0) }

// parseAdvanced checks a subscription's advanced filters against Event
// Grid's operators and limits.
func parseAdvanced(fs []AdvancedFilter) error {
	if len(fs) > maxAdvancedFilters {
		return fmt.Errorf("%d advanced filters, at most %d", len(fs), maxAdvancedFilters)
	}
	total := 0
	for i := range fs {
		if err := fs[i].parse(); err != nil {
			return fmt.Errorf("advancedFilters[%d] (%s on %q): %v", i, fs[i].OperatorType, fs[i].Key, err)
		}
		total += fs[i].count()
	}
	if total > maxFilterValues {
		return fmt.Errorf("advanced filters with %d values in all, at most %d", total, maxFilterValues)
	}
	return nil
}

// matchAdvanced reports whether the event ev (a JSON object, in the
// subscription's schema) passes every advanced filter of fs.
func matchAdvanced(fs []AdvancedFilter, arrays bool, ev []byte) bool {
	if len(fs) == 0 {
		return true
	}
	var m map[string]any
	if err := json.Unmarshal(ev, &m); err != nil {
		return false
	}
	for i := range fs {
		if !fs[i].match(m, arrays) {
			return false
		}
	}
	return true
}

// match evaluates f on event m.
func (f *AdvancedFilter) match(m map[string]any, arrays bool) bool {
	v, found := lookup(m, f.Key)
	switch f.OperatorType {
	case opIsNullOrUndefined:
		return !found || v == nil
	case opIsNotNull:
		return found && v != nil
	}
	var elems []any
	if found && v != nil {
		if a, isArray := v.([]any); isArray {
			if arrays {
				elems = a
			}
		} else {
			elems = []any{v}
		}
	}
	op := f.OperatorType
	negative := operators[op].positive != ""
	if negative {
		op = operators[op].positive
	}
	for _, e := range elems {
		if f.holds(op, e) {
			return !negative
		}
	}
	return negative
}

// holds reports whether the positive operator op holds for one value e
// of the key; a value of another type than op's does not.
func (f *AdvancedFilter) holds(op string, e any) bool {
	switch operators[op].operand {
	case number, numberList, rangeList:
		n, ok := e.(float64)
		if !ok {
			return false
		}
		switch op {
		case opNumberIn:
			for _, x := range f.nums {
				if n == x {
					return true
				}
			}
		case opNumberLessThan:
			return n < f.nums[0]
		case opNumberGreaterThan:
			return n > f.nums[0]
		case opNumberLessThanOrEquals:
			return n <= f.nums[0]
		case opNumberGreaterThanOrEquals:
			return n >= f.nums[0]
		case opNumberInRange:
			for _, r := range f.ranges {
				if n >= r[0] && n <= r[1] {
					return true
				}
			}
		}
		return false
	case boolean:
		b, ok := e.(bool)
		return ok && b == f.b
	case stringList:
		s, ok := e.(string)
		if !ok {
			return false
		}
		s = strings.ToLower(s)
		for _, x := range f.strs {
			switch {
			case op == opStringIn && s == x,
				op == opStringBeginsWith && strings.HasPrefix(s, x),
				op == opStringEndsWith && strings.HasSuffix(s, x),
				op == opStringContains && strings.Contains(s, x):
				return true
			}
		}
	}
	return false
}

// lookup finds key's value in event m: dot-separated names, each
// matched exactly or else ignoring case (Event Grid names the envelope's
// fields ID, Topic, Subject, EventType, DataVersion, while they are
// written id, topic, ...).
func lookup(m map[string]any, key string) (any, bool) {
	var cur any = m
	for _, name := range strings.Split(key, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok := obj[name]
		if !ok {
			for k, x := range obj {
				if strings.EqualFold(k, name) {
					v, ok = x, true
					break
				}
			}
		}
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}
