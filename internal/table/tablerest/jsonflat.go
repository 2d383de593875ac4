package tablerest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// flatMember is one member of a flat JSON object: its value is a string,
// a json.Number, a bool or nil.
type flatMember struct {
	name string
	val  any
}

// errNested reports an object or array value; the message names the
// member.
type errNested struct{ name string }

func (e *errNested) Error() string { return "the value of '" + e.name + "' is an object or array" }

// parseFlatObject parses a JSON object whose values are all scalars, in
// order, without building a map: the entity payload of every write goes
// through it. It accepts exactly the JSON that encoding/json accepts for
// such objects (strings may hold invalid UTF-8, replaced by U+FFFD as
// encoding/json does).
func parseFlatObject(b []byte) ([]flatMember, error) {
	p := flatParser{b: b}
	p.space()
	if !p.eat('{') {
		return nil, p.fail("the request body must be a JSON object")
	}
	var out []flatMember
	p.space()
	if p.eat('}') {
		return out, p.end()
	}
	for {
		p.space()
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat(':') {
			return nil, p.fail("':' expected")
		}
		p.space()
		v, err := p.value(name)
		if err != nil {
			return nil, err
		}
		out = append(out, flatMember{name, v})
		p.space()
		if p.eat(',') {
			continue
		}
		if p.eat('}') {
			return out, p.end()
		}
		return nil, p.fail("',' or '}' expected")
	}
}

type flatParser struct {
	b []byte
	i int
}

func (p *flatParser) fail(msg string) error {
	return fmt.Errorf("%s at offset %d", msg, p.i)
}

func (p *flatParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *flatParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *flatParser) end() error {
	p.space()
	if p.i != len(p.b) {
		return p.fail("unexpected data after the JSON object")
	}
	return nil
}

func (p *flatParser) lit(word string) bool {
	if len(p.b)-p.i >= len(word) && string(p.b[p.i:p.i+len(word)]) == word {
		p.i += len(word)
		return true
	}
	return false
}

func (p *flatParser) value(name string) (any, error) {
	if p.i >= len(p.b) {
		return nil, p.fail("value expected")
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '{' || c == '[':
		return nil, &errNested{name}
	case p.lit("true"):
		return true, nil
	case p.lit("false"):
		return false, nil
	case p.lit("null"):
		return nil, nil
	}
	return nil, p.fail("value expected")
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *flatParser) number() (json.Number, error) {
	start := p.i
	p.eat('-')
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.eat('0') {
		// no more integer digits after a leading zero
	} else if digits() == 0 {
		return "", p.fail("invalid number")
	}
	if p.eat('.') && digits() == 0 {
		return "", p.fail("invalid number")
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if !p.eat('+') {
			p.eat('-')
		}
		if digits() == 0 {
			return "", p.fail("invalid number")
		}
	}
	return json.Number(p.b[start:p.i]), nil
}

// str reads a JSON string at p.i.
func (p *flatParser) str() (string, error) {
	if !p.eat('"') {
		return "", p.fail("string expected")
	}
	start := p.i
	// Fast path: no escapes, valid UTF-8.
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if utf8.Valid(s) {
				return string(s), nil
			}
			return string([]rune(string(s))), nil
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.i++
	}
	buf := append([]byte(nil), p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if !utf8.Valid(buf) {
				return string([]rune(string(buf))), nil
			}
			return string(buf), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", p.fail("unterminated string")
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("invalid \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				save := p.i
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					if x, ok := p.hex4(); ok {
						r2 = x
					} else {
						return "", p.fail("invalid \\u escape")
					}
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					r = dec
				} else {
					r = utf8.RuneError
					p.i = save
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", p.fail("invalid escape")
		}
	}
	return "", p.fail("unterminated string")
}

func (p *flatParser) hex4() (rune, bool) {
	if len(p.b)-p.i < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}
