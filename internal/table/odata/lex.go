package odata

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SyntaxError is a malformed $filter. Pos is the 0-based byte offset of
// the offending token in Input.
type SyntaxError struct {
	Input string
	Pos   int
	Msg   string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("Syntax error at position %d in '%s': %s.", e.Pos, e.Input, e.Msg)
}

type tokKind uint8

const (
	tEOF tokKind = iota
	tLParen
	tRParen
	tIdent   // property name
	tLiteral // typed constant
	tEq
	tNe
	tGt
	tGe
	tLt
	tLe
	tAnd
	tOr
	tNot
)

func (k tokKind) String() string {
	switch k {
	case tEOF:
		return "end of input"
	case tLParen:
		return "'('"
	case tRParen:
		return "')'"
	case tIdent:
		return "property name"
	case tLiteral:
		return "literal"
	case tAnd:
		return "'and'"
	case tOr:
		return "'or'"
	case tNot:
		return "'not'"
	}
	return "comparison operator"
}

type token struct {
	kind tokKind
	pos  int
	text string // identifier name or source text of a literal/keyword
	val  Value  // for tLiteral
}

var keywords = map[string]tokKind{
	"eq": tEq, "ne": tNe, "gt": tGt, "ge": tGe, "lt": tLt, "le": tLe,
	"and": tAnd, "or": tOr, "not": tNot,
}

// lexer splits a filter into tokens. Keywords, literal prefixes and
// property names are case-sensitive, as in Azure ("All parts of the
// filter string are case-sensitive"), except the boolean literals.
type lexer struct {
	src string
	pos int
}

func (l *lexer) errf(pos int, format string, args ...any) error {
	return &SyntaxError{Input: l.src, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

func isIdentPart(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.src) {
		return token{kind: tEOF, pos: start}, nil
	}
	c := l.src[l.pos]
	switch {
	case c == '(':
		l.pos++
		return token{kind: tLParen, pos: start, text: "("}, nil
	case c == ')':
		l.pos++
		return token{kind: tRParen, pos: start, text: ")"}, nil
	case c == '\'':
		s, err := l.quoted()
		if err != nil {
			return token{}, err
		}
		return token{kind: tLiteral, pos: start, text: l.src[start:l.pos], val: Value{Type: String, Bytes: []byte(s)}}, nil
	case isDigit(c) || c == '-' || c == '+' || c == '.':
		return l.number()
	case isIdentStart(c):
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		word := l.src[start:l.pos]
		if l.pos < len(l.src) && l.src[l.pos] == '\'' {
			return l.typedLiteral(start, word)
		}
		if k, ok := keywords[word]; ok {
			return token{kind: k, pos: start, text: word}, nil
		}
		// Boolean literals are the exception to case sensitivity: the
		// service takes "eq True" and "eq FALSE" as it takes "eq true".
		switch {
		case strings.EqualFold(word, "true"):
			return token{kind: tLiteral, pos: start, text: word, val: BoolValue(true)}, nil
		case strings.EqualFold(word, "false"):
			return token{kind: tLiteral, pos: start, text: word, val: BoolValue(false)}, nil
		}
		switch word {
		case "NaN", "INF":
			return l.special(start, word)
		case "null":
			return token{}, l.errf(start, "null literals are not supported")
		}
		if len(word) > 255 {
			return token{}, l.errf(start, "property name exceeds 255 characters")
		}
		return token{kind: tIdent, pos: start, text: word}, nil
	}
	return token{}, l.errf(start, "unexpected character '%s'", printable(l.src[start:]))
}

// printable returns the first rune of s, escaped if it is not printable.
func printable(s string) string {
	if s == "" {
		return ""
	}
	r, _ := utf8.DecodeRuneInString(s)
	if r < 0x20 || r == 0x7f || r == utf8.RuneError {
		return fmt.Sprintf("\\u%04x", r)
	}
	return string(r)
}

// quoted reads a quoted string at l.pos; a doubled quote inside stands
// for one quote.
func (l *lexer) quoted() (string, error) {
	start := l.pos
	l.pos++ // opening quote
	var b strings.Builder
	for {
		i := strings.IndexByte(l.src[l.pos:], '\'')
		if i < 0 {
			l.pos = len(l.src)
			return "", l.errf(start, "unterminated string literal")
		}
		b.WriteString(l.src[l.pos : l.pos+i])
		l.pos += i + 1
		if l.pos < len(l.src) && l.src[l.pos] == '\'' {
			b.WriteByte('\'')
			l.pos++
			continue
		}
		return b.String(), nil
	}
}

// typedLiteral reads datetime'…', guid'…', X'…' and binary'…'.
func (l *lexer) typedLiteral(start int, prefix string) (token, error) {
	s, err := l.quoted()
	if err != nil {
		return token{}, err
	}
	text := l.src[start:l.pos]
	switch prefix {
	case "datetime":
		t, err := ParseDateTime(s)
		if err != nil {
			return token{}, l.errf(start, "unrecognized 'Edm.DateTime' literal %s", text)
		}
		return token{kind: tLiteral, pos: start, text: text, val: DateTimeValue(t)}, nil
	case "guid":
		g, err := ParseGuid(s)
		if err != nil || strings.HasPrefix(s, "{") {
			return token{}, l.errf(start, "unrecognized 'Edm.Guid' literal %s", text)
		}
		return token{kind: tLiteral, pos: start, text: text, val: Value{Type: Guid, Bytes: g}}, nil
	case "X", "binary":
		b, err := hex.DecodeString(s)
		if err != nil {
			return token{}, l.errf(start, "unrecognized 'Edm.Binary' literal %s", text)
		}
		if b == nil {
			b = []byte{}
		}
		return token{kind: tLiteral, pos: start, text: text, val: BinaryValue(b)}, nil
	}
	return token{}, l.errf(start, "unknown literal prefix '%s'", prefix)
}

// special reads NaN, INF (and -INF via number) with an optional D/d
// suffix.
func (l *lexer) special(start int, word string) (token, error) {
	f := math.NaN()
	switch word {
	case "INF":
		f = math.Inf(1)
	case "-INF":
		f = math.Inf(-1)
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'D' || l.src[l.pos] == 'd') {
		l.pos++
	}
	if l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
		return token{}, l.errf(start, "unrecognized literal '%s'", l.src[start:l.pos+1])
	}
	return token{kind: tLiteral, pos: start, text: l.src[start:l.pos], val: DoubleValue(f)}, nil
}

// number reads Int32 (digits), Int64 (digits + L), and Double (a decimal
// point or exponent, or a D suffix) literals, with an optional sign.
func (l *lexer) number() (token, error) {
	start := l.pos
	if c := l.src[l.pos]; c == '-' || c == '+' {
		l.pos++
		if strings.HasPrefix(l.src[l.pos:], "INF") && c == '-' {
			l.pos += 3
			return l.special(start, "-INF")
		}
	}
	digits := 0
	for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
		l.pos++
		digits++
	}
	isFloat := false
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		isFloat = true
		l.pos++
		frac := 0
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
			frac++
		}
		if frac == 0 {
			return token{}, l.errf(start, "digit expected after the decimal point in '%s'", l.src[start:l.pos])
		}
	}
	if digits == 0 && !isFloat {
		return token{}, l.errf(start, "unexpected character '%s'", printable(l.src[start:]))
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		isFloat = true
		l.pos++
		if l.pos < len(l.src) && (l.src[l.pos] == '+' || l.src[l.pos] == '-') {
			l.pos++
		}
		exp := 0
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
			exp++
		}
		if exp == 0 {
			return token{}, l.errf(start, "digit expected in the exponent of '%s'", l.src[start:l.pos])
		}
	}
	num := l.src[start:l.pos]
	suffix := byte(0)
	if l.pos < len(l.src) && isIdentStart(l.src[l.pos]) {
		suffix = l.src[l.pos]
		l.pos++
	}
	if l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
		for l.pos < len(l.src) && isIdentPart(l.src[l.pos]) {
			l.pos++
		}
		return token{}, l.errf(start, "unrecognized literal '%s'", l.src[start:l.pos])
	}
	text := l.src[start:l.pos]
	switch suffix {
	case 0:
		if isFloat {
			return l.double(start, num, text)
		}
		i, err := strconv.ParseInt(num, 10, 32)
		if err != nil {
			return token{}, l.errf(start, "unrecognized 'Edm.Int32' literal '%s'", text)
		}
		return token{kind: tLiteral, pos: start, text: text, val: Int32Value(int32(i))}, nil
	case 'L', 'l':
		if isFloat {
			return token{}, l.errf(start, "unrecognized 'Edm.Int64' literal '%s'", text)
		}
		i, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return token{}, l.errf(start, "unrecognized 'Edm.Int64' literal '%s'", text)
		}
		return token{kind: tLiteral, pos: start, text: text, val: Int64Value(i)}, nil
	case 'D', 'd':
		return l.double(start, num, text)
	case 'M', 'm', 'F', 'f':
		return token{}, l.errf(start, "'%s': Edm.Decimal and Edm.Single are not Azure Table types", text)
	}
	return token{}, l.errf(start, "unrecognized literal '%s'", text)
}

func (l *lexer) double(start int, num, text string) (token, error) {
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(f, 0) {
		return token{}, l.errf(start, "unrecognized 'Edm.Double' literal '%s'", text)
	}
	return token{kind: tLiteral, pos: start, text: text, val: DoubleValue(f)}, nil
}
