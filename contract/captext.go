package contract

import (
	"strings"
	"unicode/utf8"
)

// MaxTextBytes bounds each record field whose text comes from outside the
// engine (an infrastructure error, which may quote a server's reply or a
// program's stderr; the environment and injection type named by the
// problem data): its JSON encoding in a record line is at most this many
// bytes. CapText cuts what is longer. With it a record line has a fixed
// upper size, so a ledger's capacity in runs is known.
const MaxTextBytes = 1024

// CutMarker ends a text that CapText cut.
const CutMarker = " [cut]"

// CapText returns s when its JSON string encoding (without the quotes) is
// at most n bytes, else the longest prefix of whole characters that, with
// CutMarker after it, encodes in n bytes or fewer. Invalid UTF-8 becomes
// U+FFFD first (as encoding/json writes it), so the result is always valid
// UTF-8.
func CapText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if jsonWidth(s) <= n {
		return s
	}
	budget := n - jsonWidth(CutMarker)
	used, end := 0, 0
	for i, r := range s {
		w := runeJSONWidth(r)
		if used+w > budget {
			break
		}
		used += w
		end = i + utf8.RuneLen(r)
	}
	return s[:end] + CutMarker
}

// CapTexts applies CapText with MaxTextBytes to the record's fields that
// come from outside and are not part of its key.
func (r *Record) CapTexts() {
	r.InfraError = CapText(r.InfraError, MaxTextBytes)
	r.Environment = CapText(r.Environment, MaxTextBytes)
	if r.Derail != nil {
		r.Derail.InjectionType = CapText(r.Derail.InjectionType, MaxTextBytes)
	}
}

func jsonWidth(s string) int {
	w := 0
	for _, r := range s {
		w += runeJSONWidth(r)
	}
	return w
}

// runeJSONWidth is the bytes encoding/json writes for r inside a string
// (with its default HTML escaping).
func runeJSONWidth(r rune) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t' || r == '\b' || r == '\f':
		return 2
	case r < 0x20 || r == '<' || r == '>' || r == '&' || r == '\u2028' || r == '\u2029':
		return 6
	}
	return utf8.RuneLen(r)
}
