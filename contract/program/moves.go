package program

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrNoMoves is wrapped by the error ParseMoves returns when neither the
// output nor the code holds a `moves = [...]` line.
var ErrNoMoves = errors.New("no `moves = [...]` line in the program's output or code")

// ParseMoves returns the plan a program produced: the literal of the last
// `moves = <list>` printed on stdout, each move as a compact JSON value.
// The literal may be JSON or a Python literal (tuples, single or double
// quotes with escapes, True/False/None, nested lists and dicts, negative
// numbers, trailing commas, comments); tuples become JSON arrays.
//
// `moves` must not be part of a longer name (`final_moves = ...` does not
// count) and the literal must start with '[' or '('. The text is scanned
// from the start; a `moves =` inside a literal already read (in a string,
// say) is not a new occurrence. On stdout the last occurrence is
// authoritative: if its literal is malformed, that is the error. When
// stdout has none, the code is searched instead, and there the last
// assignment whose right-hand side is a complete literal wins (code
// naturally contains `moves = [m for m in ...]` and the like), unless a
// later one exceeds MaxMoves or MaxDepth.
//
// Every error is a model failure with a reason that names the line.
func ParseMoves(stdout, code string) ([]json.RawMessage, error) {
	if last, _, found := scan(stdout); found {
		if last.err != nil {
			return nil, fmt.Errorf("output %s: %w", where(stdout, last.at, last.err), last.err)
		}
		return last.moves, nil
	}
	last, answer, found := scan(code)
	switch {
	case !found:
		return nil, ErrNoMoves
	case answer == nil:
		err := fmt.Errorf("code %s: %w", where(code, last.at, last.err), last.err)
		return nil, fmt.Errorf("%w (no complete literal; last attempt: %v)", ErrNoMoves, err)
	case answer.err != nil:
		return nil, fmt.Errorf("code %s: %w", where(code, answer.at, answer.err), answer.err)
	}
	return answer.moves, nil
}

// attempt is one `moves =` occurrence and what parsing its literal gave.
type attempt struct {
	at    int // offset of the literal's opening bracket
	moves []json.RawMessage
	err   error
}

// scan parses every occurrence in text, left to right, resuming after the
// end of each literal (or after the point where it failed, so the work
// stays linear in len(text)). It returns the last attempt, the last one
// that is an answer (parsed, or failed on a size or depth limit), and
// whether there was any occurrence at all.
func scan(text string) (last attempt, answer *attempt, found bool) {
	for i := 0; ; {
		at := nextCandidate(text, i)
		if at < 0 {
			return last, answer, found
		}
		found = true
		raw, end, err := parsePlanLiteral(text, at)
		last = attempt{at: at, err: err}
		var le *literalError
		switch {
		case err == nil:
			last.moves = make([]json.RawMessage, len(raw))
			for k, m := range raw {
				last.moves[k] = json.RawMessage(m)
			}
		case errors.As(err, &le):
			end = le.pos
		}
		if err == nil || (le != nil && le.limit) {
			a := last
			answer = &a
		}
		i = max(end, at+1)
	}
}

// nextCandidate returns the offset of the '[' or '(' that follows the first
// `moves =` (with optional blanks around '=') at or after offset from, or
// -1.
func nextCandidate(text string, from int) int {
	const word = "moves"
	for i := from; i < len(text); {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return -1
		}
		j += i
		i = j + len(word)
		if j > 0 && isIdentChar(text[j-1]) {
			continue
		}
		k := skipBlanks(text, i)
		if k >= len(text) || text[k] != '=' || (k+1 < len(text) && text[k+1] == '=') {
			continue
		}
		k = skipBlanks(text, k+1)
		if k < len(text) && (text[k] == '[' || text[k] == '(') {
			return k
		}
	}
	return -1
}

func skipBlanks(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// where names the line of the literal starting at offset at and, when the
// error lies on a later line, that line too.
func where(text string, at int, err error) string {
	l, e := lineOf(text, at), lineOf(text, errPos(err, at))
	if e == l {
		return fmt.Sprintf("line %d", l)
	}
	return fmt.Sprintf("line %d (error at line %d)", l, e)
}

func errPos(err error, fallback int) int {
	var le *literalError
	if errors.As(err, &le) {
		return le.pos
	}
	return fallback
}

// lineOf returns the 1-based line number of byte offset pos in s.
func lineOf(s string, pos int) int {
	if pos > len(s) {
		pos = len(s)
	}
	return strings.Count(s[:pos], "\n") + 1
}
