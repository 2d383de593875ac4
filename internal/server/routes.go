package server

import (
	"fmt"
	"math/bits"
	"net/http"
	"net/textproto"
	"net/url"
	"reflect"
	"strings"
	"unsafe"

	"github.com/cerulean-storage/cerulean/internal/auth"
)

// A route table is one service's list of operations. One entry is one
// operation as the service's REST reference describes it: the HTTP
// method, the resource level the URL addresses, the query selectors
// (comp, restype, and the resource / action selectors of Data Lake
// Storage), the headers that tell two operations on the same URL apart
// (x-ms-copy-source present: Copy Blob rather than Put Blob), the
// operation's name, its handler, and what it needs from a SAS. Dispatch,
// the SAS check and the metrics label all read the same entry, so adding
// an operation is one entry.

// Method is a set of HTTP methods. GET and HEAD are distinct: a route
// answering both says so.
type Method uint8

// The methods a route may answer.
const (
	GET Method = 1 << iota
	HEAD
	PUT
	POST
	DELETE
	// MERGE is the Table service's MERGE verb (sent as MERGE, PATCH or
	// POST with X-HTTP-Method).
	MERGE
	// PATCH is Data Lake Storage's Path Update and Filesystem Set
	// Properties. (The Table service maps its PATCH to MERGE before
	// routing.)
	PATCH
)

// MethodOf returns the Method of an HTTP method name, 0 for one no route
// answers.
func MethodOf(m string) Method {
	switch m {
	case http.MethodGet:
		return GET
	case http.MethodHead:
		return HEAD
	case http.MethodPut:
		return PUT
	case http.MethodPost:
		return POST
	case http.MethodDelete:
		return DELETE
	case "MERGE":
		return MERGE
	case http.MethodPatch:
		return PATCH
	}
	return 0
}

// String names the methods of m, for test messages.
func (m Method) String() string {
	var out []string
	for i, n := range [...]string{"GET", "HEAD", "PUT", "POST", "DELETE", "MERGE", "PATCH"} {
		if m&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return strings.Join(out, "|")
}

// Level is a set of resource levels. Each service defines its own (Blob:
// account, container, blob; Queue: account, queue, messages, message),
// one bit each; a request is at exactly one level.
type Level uint8

// Any, as a route's Comp or Restype, matches any value, absence included.
const Any = "\x00any"

// Cond is a condition on a request header or query parameter.
type Cond struct {
	Name string
	// Present: the value must be non-empty (and equal Value, ignoring
	// case, when Value is set); otherwise it must be absent or empty.
	Present bool
	Value   string
	key     string // canonical header key
}

// Has is the condition "name is present (non-empty)".
func Has(name string) Cond { return Cond{Name: name, Present: true} }

// Lacks is the condition "name is absent or empty".
func Lacks(name string) Cond { return Cond{Name: name} }

// Is is the condition "name equals value, ignoring case".
func Is(name, value string) Cond { return Cond{Name: name, Present: true, Value: value} }

func (c *Cond) holds(v string) bool {
	if !c.Present {
		return v == ""
	}
	return v != "" && (c.Value == "" || strings.EqualFold(v, c.Value))
}

// Route is one operation of a service's route table; H is the service's
// handler type.
type Route[H any] struct {
	// Methods and Levels the operation answers.
	Methods Method
	Levels  Level
	// Comp and Restype are the values the query's comp and restype must
	// have ("" for absent, Any for any). Resource and Action, the Data
	// Lake Storage selectors, are checked only when set, so an entry that
	// sets them goes before the entries of the same URL that do not.
	Comp, Restype, Resource, Action string
	// Headers and Query are further conditions, all of which must hold.
	Headers []Cond
	Query   []Cond
	// Name is the operation's name: the metrics label and the name
	// handlers and tests use.
	Name    string
	Handler H
	// SAS is what the operation needs from a SAS; SharedKeyOnly marks an
	// operation no SAS reaches (403 AuthorizationFailure). Exactly one
	// of the two is set.
	SAS           SASRule
	SharedKeyOnly bool
	// BearerOnly marks an operation only a bearer token may call (Get
	// User Delegation Key): a SAS is refused as failed authentication
	// (Door.Serve), not as a permission. It is SharedKeyOnly as well.
	BearerOnly bool
	// Structured is what the operation does with x-ms-structured-body
	// (0: refuses it).
	Structured Structured
	// Flags are the service's own per-operation facts (allowed on a
	// snapshot, ...).
	Flags uint32
}

// Selectors are the query selectors of a request.
type Selectors struct {
	Comp, Restype, Resource, Action string
}

// Selectors reads a request's selectors from its parsed query: comp and
// restype, and resource and action when an entry of the table uses them.
func (t *Routes[H]) Selectors(q url.Values) Selectors {
	sel := Selectors{Comp: q.Get("comp"), Restype: q.Get("restype")}
	if t.dfs {
		sel.Resource, sel.Action = q.Get("resource"), q.Get("action")
	}
	return sel
}

// numMethods is the number of Method bits.
const numMethods = 7

// Routes is a service's route table, built once by NewRoutes.
type Routes[H any] struct {
	all []Route[H]
	// by lists the entries of each level and method, in table order.
	by    [8][numMethods][]*Route[H]
	names []string
	dfs   bool // an entry sets Resource or Action
}

// NewRoutes builds a table from rs, which are tried in order: the first
// entry that matches a request is its operation. It panics on a
// malformed entry (no method, level or name; neither or both of a SAS
// rule and SharedKeyOnly), which is a programming error found at start.
func NewRoutes[H any](rs []Route[H]) *Routes[H] {
	t := &Routes[H]{all: rs}
	seen := map[string]bool{}
	for i := range t.all {
		r := &t.all[i]
		if r.Methods == 0 || r.Levels == 0 || r.Name == "" {
			panic(fmt.Sprintf("route %d (%q): no method, level or name", i, r.Name))
		}
		if (r.SAS.Resource != 0) == r.SharedKeyOnly {
			panic(fmt.Sprintf("route %q: exactly one of a SAS rule and SharedKeyOnly is needed", r.Name))
		}
		if r.BearerOnly && !r.SharedKeyOnly {
			panic(fmt.Sprintf("route %q: BearerOnly without SharedKeyOnly", r.Name))
		}
		for j := range r.Headers {
			r.Headers[j].key = textproto.CanonicalMIMEHeaderKey(r.Headers[j].Name)
		}
		for l := 0; l < 8; l++ {
			for m := 0; m < numMethods; m++ {
				if r.Levels&(1<<l) != 0 && r.Methods&(1<<m) != 0 {
					t.by[l][m] = append(t.by[l][m], r)
				}
			}
		}
		t.dfs = t.dfs || r.Resource != "" || r.Action != ""
		if !seen[r.Name] {
			seen[r.Name] = true
			t.names = append(t.names, r.Name)
		}
	}
	return t
}

// Match returns the first route for a request at level (one bit) with
// method m (one bit), selectors sel, headers h and query q; nil if none.
func (t *Routes[H]) Match(m Method, level Level, sel *Selectors, h http.Header, q url.Values) *Route[H] {
	if level == 0 || m == 0 || m >= 1<<numMethods {
		return nil
	}
	for _, r := range t.by[bits.TrailingZeros8(uint8(level))&7][bits.TrailingZeros8(uint8(m))] {
		if (r.Comp != Any && r.Comp != sel.Comp) ||
			(r.Restype != Any && r.Restype != sel.Restype) ||
			(r.Resource != "" && r.Resource != sel.Resource) ||
			(r.Action != "" && r.Action != sel.Action) {
			continue
		}
		ok := true
		for i := range r.Headers {
			c := &r.Headers[i]
			var v string
			if vs := h[c.key]; len(vs) > 0 {
				v = vs[0]
			}
			if !c.holds(v) {
				ok = false
				break
			}
		}
		for i := 0; ok && i < len(r.Query); i++ {
			ok = r.Query[i].holds(q.Get(r.Query[i].Name))
		}
		if ok {
			return r
		}
	}
	return nil
}

// Names returns the table's operation names, each once, in order.
func (t *Routes[H]) Names() []string { return t.names }

// All returns the table's entries, in order, for tests that check a
// service's per-operation flags against its reference; callers must not
// modify them.
func (t *Routes[H]) All() []Route[H] { return t.all }

// Rule is the SAS rule of a route: rule and ok=true, or ok=false for a
// Shared Key only operation (AuthorizeSAS's ok).
func (r *Route[H]) Rule() (SASRule, bool) { return r.SAS, !r.SharedKeyOnly }

// Verify checks a route table's invariants and returns what breaks them:
// every entry has a SAS rule or is Shared Key only, and a bearer-only
// entry is Shared Key only; entries sharing a name share their handler,
// flags, bearer-only mark and structured-body rule, and their SAS rule
// unless their header or query conditions differ (a variant of one
// operation whose SAS rule depends on a header or a parameter, as Lease
// Blob's break action and Delete Blob of a version); and no entry is
// shadowed: a request made from each entry, at each of its levels and
// with each of its methods, matches that entry. Services run it in their
// tests.
func (t *Routes[H]) Verify() []error {
	var errs []error
	first := map[string]*Route[H]{}
	for i := range t.all {
		r := &t.all[i]
		if (r.SAS.Resource != 0) == r.SharedKeyOnly {
			errs = append(errs, fmt.Errorf("route %d %q: needs exactly one of a SAS rule and SharedKeyOnly", i, r.Name))
		}
		if r.BearerOnly && !r.SharedKeyOnly {
			errs = append(errs, fmt.Errorf("route %d %q: bearer only but not Shared Key only", i, r.Name))
		}
		if f, ok := first[r.Name]; ok {
			if funcIdentity(f.Handler) != funcIdentity(r.Handler) {
				errs = append(errs, fmt.Errorf("route %d %q: another handler than the first entry of that name", i, r.Name))
			}
			if f.Flags != r.Flags || f.SharedKeyOnly != r.SharedKeyOnly || f.BearerOnly != r.BearerOnly || f.Structured != r.Structured {
				errs = append(errs, fmt.Errorf("route %d %q: other flags than the first entry of that name", i, r.Name))
			}
			if f.SAS != r.SAS && reflect.DeepEqual(f.Headers, r.Headers) && reflect.DeepEqual(f.Query, r.Query) {
				errs = append(errs, fmt.Errorf("route %d %q: another SAS rule than the first entry of that name, with the same headers and query conditions", i, r.Name))
			}
		} else {
			first[r.Name] = r
		}
		for l := 0; l < 8; l++ {
			for b := 0; b < numMethods; b++ {
				lv, m := Level(1<<l), Method(1<<b)
				if r.Levels&lv == 0 || r.Methods&m == 0 {
					continue
				}
				sel, h, q := r.Example()
				if got := t.Match(m, lv, &sel, h, q); got != r {
					name := "nothing"
					if got != nil {
						name = fmt.Sprintf("%q", got.Name)
					}
					errs = append(errs, fmt.Errorf("route %d %q (%s, level %#x) is shadowed: its example matches %s", i, r.Name, m, lv, name))
				}
			}
		}
	}
	return errs
}

// Example returns the selectors, headers and query of a request made for
// r: its selectors (a value no fixed selector has where r takes any),
// the headers and query parameters its conditions require.
func (r *Route[H]) Example() (Selectors, http.Header, url.Values) {
	const other = "example-any"
	sel := Selectors{Comp: r.Comp, Restype: r.Restype, Resource: r.Resource, Action: r.Action}
	if sel.Comp == Any {
		sel.Comp = other
	}
	if sel.Restype == Any {
		sel.Restype = other
	}
	h, q := http.Header{}, url.Values{}
	for _, c := range r.Headers {
		if c.Present {
			h.Set(c.Name, example(c))
		}
	}
	for _, c := range r.Query {
		if c.Present {
			q.Set(c.Name, example(c))
		}
	}
	return sel, h, q
}

func example(c Cond) string {
	if c.Value != "" {
		return c.Value
	}
	return "example"
}

// funcIdentity is the identity of the func value h: the closure object it
// points to, one per evaluation of a func literal (so two wrappings of
// one handler by Typed differ, inlined or not, and entries share one only
// by sharing the value) and one per function or method expression. A
// code pointer (reflect's Pointer) would not do: closures of one literal
// share their code.
func funcIdentity[H any](h H) uintptr {
	return uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&h)))
}

// SASRule is what one operation needs from a SAS: the resource level and
// the permission letters. Each entry of a service's route table (Route)
// carries one, or says the operation is Shared Key only.
type SASRule struct {
	Resource auth.ResourceType
	// AnyOf lists letters of which any one suffices ("" for none).
	AnyOf string
	// AllOf lists letters that are all required besides AnyOf.
	AllOf string
	// AccountOnly refuses service SAS (403 AuthorizationResourceTypeMismatch).
	AccountOnly bool
	// SinceAnyOf lists letters that also suffice for a token whose
	// signed version (sv) is Since or later: Delete breaks a blob or
	// container lease from 2017-07-29 (Create an account SAS, note to
	// "Permissions by operation"; Create a service SAS, "Permissions for
	// a directory, container, or blob").
	SinceAnyOf, Since string
	// AccountPermission: only an account SAS's letters grant the
	// operation; a service SAS that reaches the resource has no letter
	// for it (403 AuthorizationPermissionMismatch). Clear Messages takes
	// Delete, a letter of the account SAS only (Create an account SAS,
	// "Queue service"; the queue permissions of Create a service SAS are
	// r, a, u and p).
	AccountPermission bool
}

// Structured is what an operation does with x-ms-structured-body, which
// only the operations whose REST reference pages list it take (Put
// Blob, Put Block, Put Page, Append Block and Get Blob; Put Range and Get
// File; Data Lake's Path - Update append); any other refuses it (400
// UnsupportedHeader).
type Structured uint8

const (
	// StructuredRequest: the request body may be a structured message,
	// decoded before the handler reads it and acknowledged on the
	// response.
	StructuredRequest Structured = 1 + iota
	// StructuredResponse: the request may ask for a structured response
	// body, which the handler frames.
	StructuredResponse
)
