package program

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// Candidate is one move list found in a prompted Derail-550 reply (an answer
// that is a JSON move list, not a program).
type Candidate struct {
	// Start is the byte offset in the reply (after <think> sections are
	// removed) where the list, or the JSON text holding it, starts.
	Start int `json:"start"`
	// Source says how it was found: "json" (the JSON move extraction) or
	// "span" (a balanced [...] span).
	Source string `json:"source"`
	// Moves are the list's elements as compact JSON.
	Moves []json.RawMessage `json:"moves"`
}

// Candidate sources.
const (
	SourceJSON = "json"
	SourceSpan = "span"
)

// MaxCandidates bounds the candidates one reply yields (the first ones in
// order of their start); a reply with more is hostile, not an answer.
const MaxCandidates = 1000

// Candidates collects every move-list candidate of a reply, in order of
// start offset (JSON extraction first at equal offsets), without
// deduplication (that needs the verifier: see runner's judge). Reasoning
// sections (<think>...</think>) are removed first; offsets refer to the text
// without them (CleanReply returns it).
//
//   - The JSON move extraction: the whole reply, and each fenced block,
//     parsed as JSON; a list counts, and so does an object whose "moves"
//     member is a list.
//   - Every '[' span: a JSON list that starts there, read whole by a JSON
//     decoder (brackets, quotes and escapes in its strings are content,
//     and JSON escapes such as \/ mean what JSON says), else the balanced
//     [...] span that starts there read as a Python literal. For the
//     balanced spans, brackets in single- or double-quoted strings (with
//     backslash escapes) do not count; a string ends at its closing quote
//     or at the end of its line (neither JSON nor Python strings span
//     lines), so a stray apostrophe cannot hide the rest of the reply.
//
// A list counts only when it is non-empty and every element is an object,
// or every element is a list or a tuple.
func Candidates(reply string) []Candidate {
	text := CleanReply(reply)
	var out []Candidate
	add := func(c Candidate) bool {
		if len(out) >= MaxCandidates {
			return false
		}
		out = append(out, c)
		return true
	}
	for _, b := range jsonTexts(text) {
		if moves, ok := jsonMoveList(text[b.start:b.end]); ok {
			add(Candidate{Start: b.start, Source: SourceJSON, Moves: moves})
		}
	}
	// Every '[' that opens a move list is read as JSON first, with a JSON
	// decoder (as the reference's raw_decode does), so brackets, quotes and
	// escapes inside its strings are string content whatever the bracket
	// scanner made of them. Where no JSON list starts, the balanced span
	// starting there is read as a Python literal.
	spanEnd := map[int]int{}
	for _, s := range BalancedSpans(text) {
		spanEnd[s[0]] = s[1]
	}
	dec := jsonDecodeBudget(len(text))
	for at := 0; at < len(text); at++ {
		if text[at] != '[' || !opensMoveList(text, at) {
			continue
		}
		moves, isJSON := dec.listAt(text, at)
		if !isJSON {
			end, ok := spanEnd[at]
			if !ok {
				continue
			}
			var err error
			if moves, err = ParseListLiteral(text[at:end]); err != nil {
				continue
			}
		}
		if !isMoveList(moves) {
			continue
		}
		if !add(Candidate{Start: at, Source: SourceSpan, Moves: moves}) {
			break
		}
	}
	sortCandidates(out)
	return out
}

// CleanReply is the reply as Candidates reads it: <think> sections removed.
func CleanReply(reply string) string { return stripThink(reply) }

// sortCandidates orders by start, JSON extraction before spans at equal
// starts, stably.
func sortCandidates(c []Candidate) {
	// insertion sort keeps it stable and is fine for at most MaxCandidates
	// nearly sorted entries (spans are found in start order already).
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && less(c[j], c[j-1]); j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
}

func less(a, b Candidate) bool {
	if a.Start != b.Start {
		return a.Start < b.Start
	}
	return a.Source == SourceJSON && b.Source != SourceJSON
}

// textRange is [start, end) of the reply.
type textRange struct{ start, end int }

// jsonTexts are the texts the JSON move extraction tries: the whole reply
// (trimmed) and each fenced block's body.
func jsonTexts(text string) []textRange {
	var out []textRange
	trimmed := strings.TrimSpace(text)
	if trimmed != "" {
		s := strings.Index(text, trimmed)
		out = append(out, textRange{s, s + len(trimmed)})
	}
	cursor := 0
	for _, b := range fencedBlocks(text) {
		if b == "" {
			continue
		}
		// Blocks come in order; a block whose body was rewritten (a
		// closing fence glued to its last line) is looked up as is and
		// skipped when not found verbatim.
		i := strings.Index(text[cursor:], b)
		if i < 0 {
			continue
		}
		s := cursor + i
		out = append(out, textRange{s, s + len(b)})
		cursor = s + len(b)
	}
	return out
}

// jsonMoveList reads text as JSON: a list, or an object with a "moves" list.
func jsonMoveList(text string) ([]json.RawMessage, bool) {
	if text == "" || (text[0] != '[' && text[0] != '{') {
		return nil, false
	}
	var list []json.RawMessage
	if text[0] == '[' {
		if err := json.Unmarshal([]byte(text), &list); err != nil {
			return nil, false
		}
	} else {
		var obj struct {
			Moves []json.RawMessage `json:"moves"`
		}
		if err := json.Unmarshal([]byte(text), &obj); err != nil {
			return nil, false
		}
		list = obj.Moves
	}
	for i := range list {
		list[i] = compactJSON(list[i])
	}
	return list, isMoveList(list)
}

// jsonDecoder reads JSON lists at offsets of one text within a budget of
// bytes read, so a hostile reply (thousands of unclosed '[') costs linear
// work: once the budget is spent, no more JSON is tried and spans are read
// as Python literals only.
type jsonDecoder struct{ budget int }

// jsonDecodeBudget allows 16 passes over a text of n bytes, plus 64 KiB.
func jsonDecodeBudget(n int) *jsonDecoder { return &jsonDecoder{budget: 16*n + 64<<10} }

// listAt decodes the JSON value starting at text[at] (a '['). It returns the
// list's elements as compact JSON and true when a whole JSON list starts
// there; text after the list is not read.
func (d *jsonDecoder) listAt(text string, at int) ([]json.RawMessage, bool) {
	if d.budget <= 0 || firstByte(json.RawMessage(text[at+1:min(len(text), at+64)])) == '(' {
		return nil, false // a tuple list is Python, not JSON
	}
	r := &countingReader{r: strings.NewReader(text[at:])}
	var list []json.RawMessage
	err := json.NewDecoder(r).Decode(&list)
	d.budget -= r.n
	if err != nil {
		return nil, false
	}
	for i := range list {
		list[i] = compactJSON(list[i])
	}
	return list, true
}

type countingReader struct {
	r *strings.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return json.RawMessage(b.Bytes())
}

// isMoveList reports whether moves is a non-empty list whose elements are
// all objects, or all lists (tuples are lists once parsed).
func isMoveList(moves []json.RawMessage) bool {
	if len(moves) == 0 {
		return false
	}
	first := firstByte(moves[0])
	if first != '{' && first != '[' {
		return false
	}
	for _, m := range moves[1:] {
		if firstByte(m) != first {
			return false
		}
	}
	return true
}

func firstByte(raw json.RawMessage) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// opensMoveList is a cheap pre-check: a move list's first element starts
// with '[', '(' or '{' (after blanks).
func opensMoveList(text string, at int) bool {
	for i := at + 1; i < len(text); i++ {
		switch text[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '[', '(', '{':
			return true
		}
		return false
	}
	return false
}

// BalancedSpans returns every balanced [...] span of text as [start, end)
// offsets, sorted by start. Brackets inside quoted strings within a span do
// not count; a string runs to its closing quote (a backslash escapes the
// next character) or to the end of its line. Unbalanced brackets are
// skipped. It runs in one pass over text.
func BalancedSpans(text string) [][2]int {
	var spans [][2]int
	var stack []int
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		if quote != 0 {
			switch c {
			case '\\':
				if i+1 < len(text) && text[i+1] != '\n' {
					i++
				}
			case '\n':
				quote = 0 // strings do not span lines
			case quote:
				quote = 0
			}
			continue
		}
		switch c {
		case '[':
			stack = append(stack, i)
		case ']':
			if len(stack) > 0 {
				spans = append(spans, [2]int{stack[len(stack)-1], i + 1})
				stack = stack[:len(stack)-1]
			}
		case '"', '\'':
			if len(stack) > 0 {
				quote = c
			}
		}
	}
	// Inner spans close first: order by start.
	sortSpans(spans)
	return spans
}

func sortSpans(s [][2]int) {
	// Spans close in end order; a merge by start via a simple stable sort.
	if len(s) < 2 {
		return
	}
	tmp := make([][2]int, len(s))
	mergeSort(s, tmp)
}

func mergeSort(s, tmp [][2]int) {
	if len(s) < 2 {
		return
	}
	m := len(s) / 2
	mergeSort(s[:m], tmp[:m])
	mergeSort(s[m:], tmp[m:])
	i, j, k := 0, m, 0
	for i < m && j < len(s) {
		if s[j][0] < s[i][0] {
			tmp[k] = s[j]
			j++
		} else {
			tmp[k] = s[i]
			i++
		}
		k++
	}
	k += copy(tmp[k:], s[i:m])
	copy(tmp[k:], s[j:])
	copy(s, tmp[:len(s)])
}

// ParseListLiteral parses text, which must be exactly one list or tuple
// literal (JSON or Python syntax, as ParseMoves accepts), and returns its
// elements as compact JSON. Tuples become lists.
func ParseListLiteral(text string) ([]json.RawMessage, error) {
	if text == "" || (text[0] != '[' && text[0] != '(') {
		return nil, &literalError{msg: "not a list literal"}
	}
	elems, end, err := parsePlanLiteral(text, 0)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(text[end:]) != "" {
		return nil, &literalError{pos: end, msg: "text after the list"}
	}
	out := make([]json.RawMessage, len(elems))
	for i, e := range elems {
		out[i] = json.RawMessage(e)
	}
	return out, nil
}

// finalWord matches the words that mark the final answer.
var finalWord = regexp.MustCompile(`(?i)\b(final|answer|therefore|solution)\b`)

// FinalMarker returns the offset in text (a CleanReply) of the last
// whole-word, case-insensitive "final", "answer", "therefore" or
// "solution", or -1 when there is none.
func FinalMarker(text string) int {
	locs := finalWord.FindAllStringIndex(text, -1)
	if len(locs) == 0 {
		return -1
	}
	return locs[len(locs)-1][0]
}
