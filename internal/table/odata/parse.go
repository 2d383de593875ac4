package odata

import (
	"math"
	"strconv"
	"strings"
)

// Record is what a filter is evaluated against: an entity (or a table,
// whose only property is TableName). Property returns false for a
// property the record does not have.
type Record interface {
	Property(name string) (Value, bool)
}

// Filter is a compiled $filter expression. It is immutable and safe for
// concurrent use.
type Filter struct {
	root expr
	src  string
}

// MaxDepth bounds the nesting of parentheses and 'not' operators.
const MaxDepth = 100

// MaxComparisons is the most comparisons (eq, ne, gt, ge, lt, le) one
// filter may hold: Azure documents "no more than 15 discrete comparisons
// are permitted within a $filter string" (Querying tables and entities).
const MaxComparisons = 15

// Parse compiles a $filter expression. The grammar is Azure's subset of
// OData v3:
//
//	filter     = or
//	or         = and { "or" and }
//	and        = unary { "and" unary }
//	unary      = "not" unary | comparison
//	comparison = operand [ relop operand ] | "(" or ")"
//	relop      = "eq" | "ne" | "gt" | "ge" | "lt" | "le"
//	operand    = property | literal
//	literal    = 'string' | 123 | 123L | 1.5 | 1e3 | 1.5D | NaN | INF | -INF
//	           | true | false | datetime'…' | guid'…' | X'…' | binary'…'
//
// At least one side of a comparison must be a literal (Azure cannot
// compare two properties); a literal on the left is allowed. A bare
// property or true/false is a boolean expression. Errors are
// *SyntaxError values naming the position of the offending token.
func Parse(src string) (*Filter, error) {
	p := &parser{lex: lexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tEOF {
		return nil, &SyntaxError{Input: src, Pos: 0, Msg: "the filter is empty"}
	}
	e, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tEOF {
		return nil, p.unexpected("'and', 'or' or end of input")
	}
	return &Filter{root: e, src: src}, nil
}

// Match reports whether r satisfies the filter.
func (f *Filter) Match(r Record) bool { return f.root.eval(r) }

// String returns the canonical form of the filter: fully parenthesised,
// literals in a form that shows their type. Parse(f.String()) yields an
// equivalent filter with the same String.
func (f *Filter) String() string { return f.root.String() }

type parser struct {
	lex         lexer
	tok         token
	comparisons int // relational operators seen so far
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) errAt(pos int, msg string) error {
	return &SyntaxError{Input: p.lex.src, Pos: pos, Msg: msg}
}

func (p *parser) unexpected(want string) error {
	got := p.tok.kind.String()
	if p.tok.text != "" {
		got = "'" + p.tok.text + "'"
	}
	return p.errAt(p.tok.pos, "expected "+want+", found "+got)
}

func (p *parser) or(depth int) (expr, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tOr {
		if err := p.advance(); err != nil {
			return nil, err
		}
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		l = &orExpr{l, r}
	}
	return l, nil
}

func (p *parser) and(depth int) (expr, error) {
	l, err := p.unary(depth)
	if err != nil {
		return nil, err
	}
	for p.tok.kind == tAnd {
		if err := p.advance(); err != nil {
			return nil, err
		}
		r, err := p.unary(depth)
		if err != nil {
			return nil, err
		}
		l = &andExpr{l, r}
	}
	return l, nil
}

func (p *parser) unary(depth int) (expr, error) {
	if depth > MaxDepth {
		return nil, p.errAt(p.tok.pos, "the filter is nested too deeply")
	}
	if p.tok.kind == tNot {
		if err := p.advance(); err != nil {
			return nil, err
		}
		x, err := p.unary(depth + 1)
		if err != nil {
			return nil, err
		}
		return &notExpr{x}, nil
	}
	return p.comparison(depth)
}

func isRelop(k tokKind) bool { return k >= tEq && k <= tLe }

// comparison parses "( or )" or "operand [relop operand]".
func (p *parser) comparison(depth int) (expr, error) {
	if p.tok.kind == tLParen {
		open := p.tok.pos
		if err := p.advance(); err != nil {
			return nil, err
		}
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.tok.kind != tRParen {
			if p.tok.kind == tEOF {
				return nil, p.errAt(open, "unbalanced parenthesis")
			}
			return nil, p.unexpected("')'")
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		if isRelop(p.tok.kind) {
			return nil, p.errAt(p.tok.pos, "the left operand of '"+p.tok.text+"' must be a property name or a literal")
		}
		return e, nil
	}
	left := p.tok
	if left.kind != tIdent && left.kind != tLiteral {
		return nil, p.unexpected("a property name, a literal, 'not' or '('")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if !isRelop(p.tok.kind) {
		switch {
		case left.kind == tIdent:
			return &boolPropExpr{prop: left.text}, nil
		case left.val.Type == Boolean:
			return &constExpr{v: left.val.Bool()}, nil
		}
		return nil, p.errAt(left.pos, "the literal "+left.text+" is not a boolean expression")
	}
	op := p.tok
	if p.comparisons++; p.comparisons > MaxComparisons {
		return nil, p.errAt(op.pos, "a filter can hold at most "+strconv.Itoa(MaxComparisons)+" comparisons")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	right := p.tok
	if right.kind != tIdent && right.kind != tLiteral {
		return nil, p.unexpected("a property name or a literal after '" + op.text + "'")
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if isRelop(p.tok.kind) {
		return nil, p.errAt(p.tok.pos, "comparisons cannot be chained; use 'and'")
	}
	switch {
	case left.kind == tIdent && right.kind == tIdent:
		return nil, p.errAt(left.pos, "a property cannot be compared with another property; one side must be a constant")
	case left.kind == tIdent:
		return &cmpExpr{prop: left.text, op: op.kind, lit: right.val, litText: right.text}, nil
	case right.kind == tIdent:
		return &cmpExpr{prop: right.text, op: flip(op.kind), lit: left.val, litText: left.text}, nil
	}
	return &constExpr{v: compareOp(left.val, op.kind, right.val)}, nil
}

// flip mirrors an operator so that "lit op prop" becomes "prop op' lit".
func flip(k tokKind) tokKind {
	switch k {
	case tGt:
		return tLt
	case tGe:
		return tLe
	case tLt:
		return tGt
	case tLe:
		return tGe
	}
	return k
}

// compareOp applies op to a and b with Azure's typing rules: values of
// different EDM types never match (not even with ne); NaN is unordered
// and only "ne" holds for it.
func compareOp(a Value, op tokKind, b Value) bool {
	c, ok := Compare(a, b)
	if !ok {
		return op == tNe && a.Type == Double && b.Type == Double
	}
	switch op {
	case tEq:
		return c == 0
	case tNe:
		return c != 0
	case tGt:
		return c > 0
	case tGe:
		return c >= 0
	case tLt:
		return c < 0
	case tLe:
		return c <= 0
	}
	return false
}

type expr interface {
	eval(r Record) bool
	String() string
}

type orExpr struct{ l, r expr }

func (e *orExpr) eval(r Record) bool { return e.l.eval(r) || e.r.eval(r) }
func (e *orExpr) String() string     { return "(" + e.l.String() + " or " + e.r.String() + ")" }

type andExpr struct{ l, r expr }

func (e *andExpr) eval(r Record) bool { return e.l.eval(r) && e.r.eval(r) }
func (e *andExpr) String() string     { return "(" + e.l.String() + " and " + e.r.String() + ")" }

type notExpr struct{ x expr }

func (e *notExpr) eval(r Record) bool { return !e.x.eval(r) }
func (e *notExpr) String() string     { return "(not " + e.x.String() + ")" }

type constExpr struct{ v bool }

func (e *constExpr) eval(Record) bool { return e.v }
func (e *constExpr) String() string {
	return strconv.FormatBool(e.v)
}

// boolPropExpr is a bare property: true when the record has a Boolean
// property of that name set to true.
type boolPropExpr struct{ prop string }

func (e *boolPropExpr) eval(r Record) bool {
	v, ok := r.Property(e.prop)
	return ok && v.Type == Boolean && v.Int != 0
}
func (e *boolPropExpr) String() string { return e.prop }

type cmpExpr struct {
	prop    string
	op      tokKind
	lit     Value
	litText string
}

func (e *cmpExpr) eval(r Record) bool {
	v, ok := r.Property(e.prop)
	if !ok {
		return false
	}
	return compareOp(v, e.op, e.lit)
}

var opNames = map[tokKind]string{tEq: "eq", tNe: "ne", tGt: "gt", tGe: "ge", tLt: "lt", tLe: "le"}

func (e *cmpExpr) String() string {
	return "(" + e.prop + " " + opNames[e.op] + " " + Literal(e.lit) + ")"
}

// Literal renders v as an OData literal of its type that Parse reads
// back as the same value: 'text', 42, 42L, 1.5D, true, datetime'…',
// guid'…', X'…'.
func Literal(v Value) string {
	switch v.Type {
	case String:
		return "'" + strings.ReplaceAll(string(v.Bytes), "'", "''") + "'"
	case Binary:
		return "X'" + strings.ToUpper(hexString(v.Bytes)) + "'"
	case Guid:
		return "guid'" + FormatGuid(v.Bytes) + "'"
	case Boolean:
		return strconv.FormatBool(v.Bool())
	case DateTime:
		return "datetime'" + FormatDateTime(v.Time()) + "'"
	case Double:
		switch {
		case math.IsNaN(v.Float):
			return "NaN"
		case math.IsInf(v.Float, 1):
			return "INF"
		case math.IsInf(v.Float, -1):
			return "-INF"
		}
		return strconv.FormatFloat(v.Float, 'g', -1, 64) + "D"
	case Int64:
		return strconv.FormatInt(v.Int, 10) + "L"
	case Int32:
		return strconv.FormatInt(v.Int, 10)
	}
	return "null"
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// Range is the set of string values a key property can take under a
// filter: the intersection of the top-level conjuncts that compare the
// property with a string constant. A zero Range is unbounded.
type Range struct {
	Lo, Hi         string
	HasLo, HasHi   bool
	LoIncl, HiIncl bool
	// Empty is set when the conjuncts cannot all hold (e.g. a key
	// compared with a non-string literal, or disjoint bounds).
	Empty bool
}

// Exact reports whether the range is a single value.
func (r Range) Exact() (string, bool) {
	if r.HasLo && r.HasHi && r.LoIncl && r.HiIncl && r.Lo == r.Hi && !r.Empty {
		return r.Lo, true
	}
	return "", false
}

// KeyRange derives the range of prop (PartitionKey, RowKey or
// TableName) implied by the filter, for narrowing a scan. Every record
// the filter matches has prop inside the range; the filter must still be
// evaluated on each record.
func (f *Filter) KeyRange(prop string) Range {
	var r Range
	var walk func(e expr)
	walk = func(e expr) {
		switch x := e.(type) {
		case *andExpr:
			walk(x.l)
			walk(x.r)
		case *constExpr:
			if !x.v {
				r.Empty = true
			}
		case *cmpExpr:
			if x.prop != prop {
				return
			}
			if x.lit.Type != String {
				r.Empty = true
				return
			}
			v := string(x.lit.Bytes)
			switch x.op {
			case tEq:
				r.lower(v, true)
				r.upper(v, true)
			case tGt:
				r.lower(v, false)
			case tGe:
				r.lower(v, true)
			case tLt:
				r.upper(v, false)
			case tLe:
				r.upper(v, true)
			}
		}
	}
	walk(f.root)
	if r.HasLo && r.HasHi && (r.Lo > r.Hi || (r.Lo == r.Hi && !(r.LoIncl && r.HiIncl))) {
		r.Empty = true
	}
	return r
}

func (r *Range) lower(v string, incl bool) {
	if !r.HasLo || v > r.Lo || (v == r.Lo && !incl) {
		r.Lo, r.LoIncl, r.HasLo = v, incl, true
	}
}

func (r *Range) upper(v string, incl bool) {
	if !r.HasHi || v < r.Hi || (v == r.Hi && !incl) {
		r.Hi, r.HiIncl, r.HasHi = v, incl, true
	}
}
