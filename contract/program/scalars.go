package program

// Scalar literals: strings (all quote styles, prefixes, escapes, implicit
// concatenation), numbers and names, and the JSON string encoder.

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// strings parses one string literal or several adjacent ones (implicit
// concatenation, as Python allows) and writes one JSON string.
func (p *litParser) strings() error {
	var sb strings.Builder
	for {
		if err := p.oneString(&sb); err != nil {
			return err
		}
		save := p.pos
		p.skipSpace()
		if p.eof() {
			break
		}
		if c := p.s[p.pos]; c == '"' || c == '\'' {
			continue
		}
		if q := p.stringPrefixLen(); q > 0 {
			p.pos += q
			continue
		}
		p.pos = save
		break
	}
	p.out = appendJSONString(p.out, sb.String())
	return nil
}

// stringPrefixLen returns the length of a string prefix (u, b, r, and the
// two-letter combinations of b and r) at the current position when it is
// immediately followed by a quote, else 0.
func (p *litParser) stringPrefixLen() int {
	for n := 1; n <= 2 && p.pos+n < len(p.s); n++ {
		pre := strings.ToLower(p.s[p.pos : p.pos+n])
		switch pre {
		case "u", "b", "r", "br", "rb":
		default:
			return 0
		}
		if c := p.s[p.pos+n]; c == '"' || c == '\'' {
			return n
		}
	}
	return 0
}

// oneString parses a single quoted string (single, double or triple quotes)
// at the current position, honouring a raw prefix recorded just before it.
func (p *litParser) oneString(sb *strings.Builder) error {
	raw := false
	for i := p.pos - 1; i >= 0 && i >= p.pos-2; i-- {
		c := p.s[i]
		if c == 'r' || c == 'R' {
			raw = true
		}
		if !(c == 'r' || c == 'R' || c == 'b' || c == 'B' || c == 'u' || c == 'U') {
			break
		}
	}
	q := p.s[p.pos]
	triple := strings.HasPrefix(p.s[p.pos:], strings.Repeat(string(q), 3))
	start := p.pos
	if triple {
		p.pos += 3
	} else {
		p.pos++
	}
	for {
		if p.eof() {
			p.pos = start
			return p.errf("unterminated string")
		}
		c := p.s[p.pos]
		switch {
		case c == q && !triple:
			p.pos++
			return nil
		case c == q && strings.HasPrefix(p.s[p.pos:], strings.Repeat(string(q), 3)):
			p.pos += 3
			return nil
		case c == '\n' && !triple:
			return p.errf("newline inside a string")
		case c == '\\' && raw:
			sb.WriteByte(c)
			p.pos++
			if !p.eof() {
				sb.WriteByte(p.s[p.pos])
				p.pos++
			}
		case c == '\\':
			if err := p.escape(sb); err != nil {
				return err
			}
		default:
			sb.WriteByte(c)
			p.pos++
		}
	}
}

// escape decodes one backslash escape sequence.
func (p *litParser) escape(sb *strings.Builder) error {
	p.pos++ // the backslash
	if p.eof() {
		return p.errf("unterminated string")
	}
	c := p.s[p.pos]
	p.pos++
	switch c {
	case '\n':
	case '\\', '\'', '"':
		sb.WriteByte(c)
	case 'n':
		sb.WriteByte('\n')
	case 't':
		sb.WriteByte('\t')
	case 'r':
		sb.WriteByte('\r')
	case 'a':
		sb.WriteByte('\a')
	case 'b':
		sb.WriteByte('\b')
	case 'f':
		sb.WriteByte('\f')
	case 'v':
		sb.WriteByte('\v')
	case 'x':
		return p.hexEscape(sb, 2)
	case 'u':
		return p.hexEscape(sb, 4)
	case 'U':
		return p.hexEscape(sb, 8)
	case '0', '1', '2', '3', '4', '5', '6', '7':
		v := int(c - '0')
		for i := 0; i < 2 && !p.eof() && p.s[p.pos] >= '0' && p.s[p.pos] <= '7'; i++ {
			v = v*8 + int(p.s[p.pos]-'0')
			p.pos++
		}
		sb.WriteRune(rune(v))
	default:
		// Python keeps unknown escapes verbatim.
		sb.WriteByte('\\')
		sb.WriteByte(c)
	}
	return nil
}

func (p *litParser) hexEscape(sb *strings.Builder, n int) error {
	if p.pos+n > len(p.s) {
		return p.errf("truncated \\x/\\u escape")
	}
	v, err := strconv.ParseUint(p.s[p.pos:p.pos+n], 16, 32)
	if err != nil {
		return p.errf("bad escape %q", p.s[p.pos:p.pos+n])
	}
	p.pos += n
	r := rune(v)
	if !utf8.ValidRune(r) {
		r = utf8.RuneError
	}
	sb.WriteRune(r)
	return nil
}

// number parses an int or float with optional signs, underscores, exponent
// and 0x/0o/0b prefixes, and writes it as a JSON number.
func (p *litParser) number() error {
	start := p.pos
	neg := false
	for !p.eof() && (p.s[p.pos] == '-' || p.s[p.pos] == '+') {
		if p.s[p.pos] == '-' {
			neg = !neg
		}
		p.pos++
		p.skipSpace()
	}
	if p.eof() {
		return p.errf("sign without a number")
	}
	if isIdentStart(p.s[p.pos]) {
		word := p.identifier()
		p.pos = start
		return p.errf("%q is not a finite number", word)
	}
	numStart := p.pos
	for !p.eof() && (isIdentChar(p.s[p.pos]) || p.s[p.pos] == '.' ||
		((p.s[p.pos] == '-' || p.s[p.pos] == '+') && (p.s[p.pos-1] == 'e' || p.s[p.pos-1] == 'E') && !isRadix(p.s[numStart:p.pos]))) {
		p.pos++
	}
	text := strings.ReplaceAll(p.s[numStart:p.pos], "_", "")
	if text == "" {
		p.pos = start
		return p.errf("expected a number")
	}
	if neg {
		p.out = append(p.out, '-')
	}
	if isRadix(text) {
		if len(text) > maxRadixDigits {
			return p.errf("integer literal too long")
		}
		var z big.Int
		if _, ok := z.SetString(text, 0); !ok {
			return p.errf("bad integer literal %q", text)
		}
		p.out = z.Append(p.out, 10)
		return nil
	}
	if allDigits(text) {
		t := strings.TrimLeft(text, "0")
		if t == "" {
			t = "0"
		}
		if neg && t == "0" {
			p.out = p.out[:len(p.out)-1]
		}
		p.out = append(p.out, t...)
		return nil
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || strings.ContainsAny(text, "xXjJ") {
		p.pos = numStart
		return p.errf("bad number %q", text)
	}
	n := len(p.out)
	p.out = strconv.AppendFloat(p.out, f, 'g', -1, 64)
	if !strings.ContainsAny(string(p.out[n:]), ".e") {
		p.out = append(p.out, ".0"...) // a float stays a float, as in Python's json.dumps
	}
	return nil
}

func isRadix(t string) bool {
	if len(t) < 2 || t[0] != '0' {
		return false
	}
	switch t[1] {
	case 'x', 'X', 'o', 'O', 'b', 'B':
		return true
	}
	return false
}

func allDigits(t string) bool {
	for i := 0; i < len(t); i++ {
		if !isDigit(t[i]) {
			return false
		}
	}
	return len(t) > 0
}

// name parses True/False/None (and JSON's true/false/null), or a string
// with a prefix such as b'..' or u'..'.
func (p *litParser) name() error {
	if n := p.stringPrefixLen(); n > 0 {
		p.pos += n
		return p.strings()
	}
	start := p.pos
	word := p.identifier()
	switch word {
	case "True", "true":
		p.out = append(p.out, "true"...)
	case "False", "false":
		p.out = append(p.out, "false"...)
	case "None", "null":
		p.out = append(p.out, "null"...)
	default:
		p.pos = start
		return p.errf("unexpected name %q (only literals are allowed)", truncate(word, 40))
	}
	return nil
}

func (p *litParser) identifier() string {
	start := p.pos
	for !p.eof() && isIdentChar(p.s[p.pos]) {
		p.pos++
	}
	return p.s[start:p.pos]
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD;
// HTML characters are not escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20 || c == 0x7f:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\ufffd"...)
		} else if r == '\u2028' || r == '\u2029' {
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
