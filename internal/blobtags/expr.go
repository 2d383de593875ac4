package blobtags

import (
	"fmt"
	"strings"
)

// Expr is a parsed tag expression. Two dialects share the syntax
//
//	"key" op 'value' [AND|OR …], ( … )
//
// with keys in double quotes, or bare when made of letters, digits and
// '_' (key op 'value'), and values in single quotes (a quote inside is
// doubled), keywords in any case:
//
//   - Where (Find Blobs by Tags, over the account or in a container):
//     comparisons =, >, >=, <, <= joined by AND only, no parentheses; the
//     pseudo-key @container (unquoted, with = only) restricts the search
//     to one container.
//   - Condition (x-ms-if-tags): also <>, OR and parentheses.
//
// A comparison against a tag the blob does not have is false. Values
// compare as strings, byte by byte.
type Expr struct {
	root node
	keys []string // tag keys named, in order of first use
}

type node interface {
	eval(t Tags, container string) bool
}

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type cmpNode struct {
	key       string
	container bool // @container
	op        string
	val       string
}

func (n andNode) eval(t Tags, c string) bool { return n.l.eval(t, c) && n.r.eval(t, c) }
func (n orNode) eval(t Tags, c string) bool  { return n.l.eval(t, c) || n.r.eval(t, c) }

func (n cmpNode) eval(t Tags, c string) bool {
	var v string
	if n.container {
		v = c
	} else {
		var ok bool
		if v, ok = t[n.key]; !ok {
			return false
		}
	}
	switch n.op {
	case "=":
		return v == n.val
	case "<>":
		return v != n.val
	case ">":
		return v > n.val
	case ">=":
		return v >= n.val
	case "<":
		return v < n.val
	case "<=":
		return v <= n.val
	}
	return false
}

// Matches reports whether a blob with tags t in container c satisfies e.
func (e *Expr) Matches(t Tags, container string) bool { return e.root.eval(t, container) }

// Keys returns the tag keys e names (not @container), in order of first
// use: Find Blobs by Tags returns these tags of each blob it finds.
func (e *Expr) Keys() []string { return e.keys }

// Container returns the container an @container = '…' comparison names,
// or "".
func (e *Expr) Container() string {
	var find func(n node) string
	find = func(n node) string {
		switch n := n.(type) {
		case andNode:
			if c := find(n.l); c != "" {
				return c
			}
			return find(n.r)
		case cmpNode:
			if n.container {
				return n.val
			}
		}
		return ""
	}
	return find(e.root)
}

// Term is one comparison on a tag key.
type Term struct{ Key, Op, Value string }

// Terms returns the comparisons on tag keys that every match of e
// satisfies (those joined by AND at the top, none from under an OR), in
// order: an index can be read for one of them, the whole expression
// deciding on what it returns.
func (e *Expr) Terms() []Term {
	var out []Term
	var walk func(n node)
	walk = func(n node) {
		switch n := n.(type) {
		case andNode:
			walk(n.l)
			walk(n.r)
		case cmpNode:
			if !n.container {
				out = append(out, Term{Key: n.key, Op: n.op, Value: n.val})
			}
		}
	}
	walk(e.root)
	return out
}

// maxExprTags bounds the distinct tag keys an expression names: "A
// filter can contain up to 10 tags" (Manage and find Azure Blob data with
// blob index tags), counted as unique keys, so a range on one tag
// ("Rank" >= '1' AND "Rank" < '9') names one; @container is no tag.
// maxDepth bounds the nesting of parentheses (inferred: the stack, not
// Azure, needs a bound).
const (
	maxExprTags = maxTags
	maxDepth    = 10
)

// ParseWhere parses the where= parameter of Find Blobs by Tags, over the
// account or in one container; @container may be used in both (the blob
// index documentation's examples filter on @container within a
// container's Find Blobs by Tags as well).
func ParseWhere(s string) (*Expr, error) {
	return parse(s, false, true)
}

// ParseCondition parses an x-ms-if-tags header.
func ParseCondition(s string) (*Expr, error) {
	return parse(s, true, false)
}

// SyntaxError describes where an expression fails to parse.
type SyntaxError struct {
	Pos int
	Msg string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("Error parsing query at or near character position %d: %s", e.Pos, e.Msg)
}

type parser struct {
	s         string
	pos       int
	full      bool // the x-ms-if-tags dialect
	container bool // @container allowed
	depth     int
	keys      []string
}

func parse(s string, full, container bool) (*Expr, error) {
	p := &parser{s: s, full: full, container: container}
	p.skip()
	if p.pos == len(p.s) {
		return nil, p.fail("empty expression")
	}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	p.skip()
	if p.pos != len(p.s) {
		return nil, p.fail("unexpected text")
	}
	return &Expr{root: root, keys: p.keys}, nil
}

func (p *parser) fail(msg string) error { return &SyntaxError{Pos: p.pos + 1, Msg: msg} }

func (p *parser) skip() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// keyword consumes kw (any case) when it stands as a word at pos.
func (p *parser) keyword(kw string) bool {
	p.skip()
	end := p.pos + len(kw)
	if end > len(p.s) || !strings.EqualFold(p.s[p.pos:end], kw) {
		return false
	}
	if end < len(p.s) && isWordByte(p.s[end]) {
		return false
	}
	p.pos = end
	return true
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	if err != nil {
		return nil, err
	}
	for p.full && p.keyword("or") {
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		l = orNode{l, r}
	}
	return l, nil
}

func (p *parser) and() (node, error) {
	l, err := p.primary()
	if err != nil {
		return nil, err
	}
	for p.keyword("and") {
		r, err := p.primary()
		if err != nil {
			return nil, err
		}
		l = andNode{l, r}
	}
	return l, nil
}

func (p *parser) primary() (node, error) {
	p.skip()
	if p.pos < len(p.s) && p.s[p.pos] == '(' {
		if !p.full {
			return nil, p.fail("parentheses are not supported here")
		}
		if p.depth >= maxDepth {
			return nil, p.fail("too deeply nested")
		}
		p.pos++
		p.depth++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		p.depth--
		p.skip()
		if p.pos >= len(p.s) || p.s[p.pos] != ')' {
			return nil, p.fail("expected ')'")
		}
		p.pos++
		return n, nil
	}
	return p.comparison()
}

func (p *parser) comparison() (node, error) {
	p.skip()
	var c cmpNode
	switch {
	case p.pos < len(p.s) && p.s[p.pos] == '"':
		k, err := p.quoted('"')
		if err != nil {
			return nil, err
		}
		if k == "" || len(k) > maxKeyLen || !validChars(k) {
			return nil, p.fail("invalid tag name")
		}
		c.key = k
	case p.container && p.keyword("@container"):
		c.container = true
	case p.pos < len(p.s) && isWordByte(p.s[p.pos]):
		// An unquoted name: letters, digits and '_' (tag1='val1', as the
		// JavaScript SDK's tests recorded against Azure write it).
		start := p.pos
		for p.pos < len(p.s) && isWordByte(p.s[p.pos]) {
			p.pos++
		}
		if p.pos-start > maxKeyLen {
			p.pos = start
			return nil, p.fail("invalid tag name")
		}
		c.key = p.s[start:p.pos]
	default:
		return nil, p.fail("expected a tag name")
	}
	p.skip()
	c.op = p.operator()
	if c.op == "" || (c.op == "<>" && !p.full) || (c.container && c.op != "=") {
		return nil, p.fail("invalid operator")
	}
	p.skip()
	if p.pos >= len(p.s) || p.s[p.pos] != '\'' {
		return nil, p.fail("expected a value in single quotes")
	}
	v, err := p.quoted('\'')
	if err != nil {
		return nil, err
	}
	if len(v) > maxValueLen || !validChars(v) {
		return nil, p.fail("invalid tag value")
	}
	c.val = v
	if !c.container && !containsString(p.keys, c.key) {
		if len(p.keys) == maxExprTags {
			return nil, p.fail("more than 10 tags")
		}
		p.keys = append(p.keys, c.key)
	}
	return c, nil
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) operator() string {
	for _, op := range [...]string{"<>", ">=", "<=", "=", ">", "<"} {
		if strings.HasPrefix(p.s[p.pos:], op) {
			p.pos += len(op)
			return op
		}
	}
	return ""
}

// quoted reads a string in quotes q (at pos), a doubled quote standing
// for one.
func (p *parser) quoted(q byte) (string, error) {
	start := p.pos
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		if c == q {
			if p.pos+1 < len(p.s) && p.s[p.pos+1] == q {
				b.WriteByte(q)
				p.pos += 2
				continue
			}
			p.pos++
			return b.String(), nil
		}
		b.WriteByte(c)
		p.pos++
	}
	p.pos = start
	return "", p.fail("unterminated string")
}
