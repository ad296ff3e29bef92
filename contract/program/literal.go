package program

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Limits on a parsed plan. A literal that exceeds one is a model failure
// reported as soon as the limit is crossed, so parsing never allocates in
// proportion to a runaway plan.
const (
	// MaxMoves is the largest number of moves a plan may hold.
	MaxMoves = 100_000
	// MaxDepth is the deepest nesting of lists, tuples and dicts allowed,
	// the plan list itself counting as depth 1.
	MaxDepth = 64
	// MaxValues bounds the number of scalar and container values in the whole
	// literal (all moves together).
	MaxValues = 2_000_000
	// maxRadixDigits bounds 0x/0o/0b integer literals, which go through
	// math/big.
	maxRadixDigits = 4096
)

// literalError is a syntax or limit error at byte offset pos of the text
// being parsed.
type literalError struct {
	pos   int
	msg   string
	limit bool // a size or depth limit, not a syntax error
}

func (e *literalError) Error() string { return e.msg }

// litParser parses a Python or JSON literal from s and writes it as compact
// JSON into out.
type litParser struct {
	s      string
	pos    int
	depth  int
	values int
	out    []byte
}

// parsePlanLiteral parses the list or tuple literal that starts at s[start]
// (which must be '[' or '(') and returns each top-level element as JSON,
// plus the offset just past the literal.
func parsePlanLiteral(s string, start int) ([][]byte, int, error) {
	p := &litParser{s: s, pos: start}
	openCh := s[start]
	closeCh := byte(']')
	if openCh == '(' {
		closeCh = ')'
	}
	p.pos++
	p.depth = 1
	var bounds []int // start offsets in p.out of each element, plus the end
	sawComma := false
	for {
		p.skipSpace()
		if p.eof() {
			return nil, 0, p.errf("unterminated plan list")
		}
		if p.s[p.pos] == closeCh {
			p.pos++
			break
		}
		if len(bounds) >= MaxMoves {
			return nil, 0, p.limitErrf("plan has more than %d moves", MaxMoves)
		}
		bounds = append(bounds, len(p.out))
		if err := p.value(); err != nil {
			return nil, 0, err
		}
		p.skipSpace()
		if p.eof() {
			return nil, 0, p.errf("unterminated plan list")
		}
		switch p.s[p.pos] {
		case ',':
			sawComma = true
			p.pos++
		case closeCh:
		default:
			return nil, 0, p.errf("expected ',' or %q, found %s", closeCh, p.describe())
		}
	}
	if openCh == '(' && len(bounds) == 1 && !sawComma {
		// `moves = ([...])` is the list itself, not a tuple holding it.
		moves, err := splitParenthesized(p.out)
		if err != nil {
			return nil, 0, &literalError{pos: start, msg: err.Error(), limit: errors.Is(err, errTooManyMoves)}
		}
		return moves, p.pos, nil
	}
	moves := make([][]byte, len(bounds))
	for i, b := range bounds {
		e := len(p.out)
		if i+1 < len(bounds) {
			e = bounds[i+1]
		}
		moves[i] = p.out[b:e:e]
	}
	return moves, p.pos, nil
}

var errTooManyMoves = fmt.Errorf("plan has more than %d moves", MaxMoves)

// splitParenthesized returns the elements of value, the JSON written for a
// parenthesised plan `( <value> )`, which must be a list.
func splitParenthesized(value []byte) ([][]byte, error) {
	if len(value) == 0 || value[0] != '[' {
		return nil, errors.New("moves is not a list: parentheses around a single value")
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(value, &elems); err != nil {
		return nil, fmt.Errorf("internal: re-reading the plan: %v", err)
	}
	if len(elems) > MaxMoves {
		return nil, errTooManyMoves
	}
	moves := make([][]byte, len(elems))
	for i, e := range elems {
		moves[i] = e
	}
	return moves, nil
}

func (p *litParser) eof() bool { return p.pos >= len(p.s) }

func (p *litParser) errf(format string, args ...any) error {
	return &literalError{pos: p.pos, msg: fmt.Sprintf(format, args...)}
}

// describe names the character at the current position for error messages.
func (p *litParser) limitErrf(format string, args ...any) error {
	return &literalError{pos: p.pos, msg: fmt.Sprintf(format, args...), limit: true}
}

func (p *litParser) describe() string {
	if p.eof() {
		return "end of text"
	}
	r, _ := utf8.DecodeRuneInString(p.s[p.pos:])
	return strconv.QuoteRune(r)
}

// skipSpace skips blanks, newlines and Python comments (a plan written in
// the code text may carry "# move disk 1" notes).
func (p *litParser) skipSpace() {
	for p.pos < len(p.s) {
		switch p.s[p.pos] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.pos++
		case '#':
			for p.pos < len(p.s) && p.s[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// value parses one value and appends its JSON form to p.out.
func (p *litParser) value() error {
	p.values++
	if p.values > MaxValues {
		return p.limitErrf("plan literal has more than %d values", MaxValues)
	}
	p.skipSpace()
	if p.eof() {
		return p.errf("unexpected end of text, expected a value")
	}
	c := p.s[p.pos]
	switch {
	case c == '[':
		return p.sequence(']')
	case c == '(':
		return p.sequence(')')
	case c == '{':
		return p.braces()
	case c == '"' || c == '\'':
		return p.strings()
	case c == '-' || c == '+' || c == '.' || isDigit(c):
		return p.number()
	case isIdentStart(c):
		return p.name()
	default:
		return p.errf("unexpected %s, expected a value", p.describe())
	}
}

func (p *litParser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.limitErrf("plan literal nested deeper than %d levels", MaxDepth)
	}
	return nil
}

// sequence parses a list ('[') or a tuple or parenthesised value ('(').
// A parenthesised single value without a trailing comma is that value, as
// in Python.
func (p *litParser) sequence(closeCh byte) error {
	if err := p.enter(); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	p.pos++
	mark := len(p.out)
	p.out = append(p.out, '[')
	n, sawComma := 0, false
	for {
		p.skipSpace()
		if p.eof() {
			return p.errf("unterminated %s", seqName(closeCh))
		}
		if p.s[p.pos] == closeCh {
			p.pos++
			break
		}
		if n > 0 {
			p.out = append(p.out, ',')
		}
		if err := p.value(); err != nil {
			return err
		}
		n++
		p.skipSpace()
		if p.eof() {
			return p.errf("unterminated %s", seqName(closeCh))
		}
		switch p.s[p.pos] {
		case ',':
			sawComma = true
			p.pos++
		case closeCh:
		default:
			return p.errf("expected ',' or %q in %s, found %s", closeCh, seqName(closeCh), p.describe())
		}
	}
	if closeCh == ')' && n == 1 && !sawComma {
		// (x) is just x: drop the '[' written above.
		p.out = append(p.out[:mark], p.out[mark+1:]...)
		return nil
	}
	p.out = append(p.out, ']')
	return nil
}

func seqName(closeCh byte) string {
	if closeCh == ')' {
		return "tuple"
	}
	return "list"
}

// braces parses a dict (as a JSON object) or a set (as a JSON array).
func (p *litParser) braces() error {
	if err := p.enter(); err != nil {
		return err
	}
	defer func() { p.depth-- }()
	p.pos++
	p.skipSpace()
	if !p.eof() && p.s[p.pos] == '}' {
		p.pos++
		p.out = append(p.out, '{', '}')
		return nil
	}
	mark := len(p.out)
	p.out = append(p.out, '[')
	isDict := false
	for n := 0; ; n++ {
		p.skipSpace()
		if p.eof() {
			return p.errf("unterminated dict or set")
		}
		if p.s[p.pos] == '}' {
			p.pos++
			break
		}
		if n > 0 {
			p.out = append(p.out, ',')
		}
		keyAt := len(p.out)
		if err := p.value(); err != nil {
			return err
		}
		p.skipSpace()
		if n == 0 && !p.eof() && p.s[p.pos] == ':' {
			isDict = true
			p.out[mark] = '{'
		}
		if isDict {
			if err := p.dictKey(keyAt); err != nil {
				return err
			}
			p.skipSpace()
			if p.eof() || p.s[p.pos] != ':' {
				return p.errf("expected ':' in dict, found %s", p.describe())
			}
			p.pos++
			p.out = append(p.out, ':')
			if err := p.value(); err != nil {
				return err
			}
			p.skipSpace()
		}
		if p.eof() {
			return p.errf("unterminated dict or set")
		}
		switch p.s[p.pos] {
		case ',':
			p.pos++
		case '}':
		default:
			return p.errf("expected ',' or '}', found %s", p.describe())
		}
	}
	if isDict {
		p.out = append(p.out, '}')
	} else {
		p.out = append(p.out, ']')
	}
	return nil
}

// dictKey rewrites the JSON value written at p.out[keyAt:] into a JSON
// object key, the way Python's json.dumps converts keys: strings stay,
// numbers, booleans and null become their text; containers are refused.
func (p *litParser) dictKey(keyAt int) error {
	key := p.out[keyAt:]
	if len(key) > 0 && key[0] == '"' {
		return nil
	}
	if len(key) == 0 || key[0] == '[' || key[0] == '{' {
		return p.errf("dict key must be a string or a number")
	}
	quoted := appendJSONString(nil, string(key))
	p.out = append(p.out[:keyAt], quoted...)
	return nil
}
