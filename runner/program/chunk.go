package program

import (
	"encoding/json"
	"errors"
	"strings"
)

// Errors of ChunkActions. Each is a model failure; the message is shown to
// the model as the verifier's message of the next proposal prompt.
var (
	// ErrNoChunkObject: the reply holds no JSON object that parses.
	ErrNoChunkObject = errors.New("the reply holds no JSON object")
	// ErrChunkNotObject: the reply is JSON, but not an object.
	ErrChunkNotObject = errors.New("the reply's JSON is not an object")
	// ErrChunkNoActions: the object has neither an "actions" list nor an
	// "action" move.
	ErrChunkNoActions = errors.New(`the JSON object has no "actions" list and no "action" move`)
)

// ChunkActions reads the moves of a VEX JSON chunk reply, shaped
// {"actions": [...]} (or {"action": MOVE} for a single move), the way the
// reference's JSON proposer reads it: reasoning sections are removed, the
// first fenced block (if any) is taken, then the text is parsed as JSON, or
// failing that each top-level balanced {...} span (string- and
// escape-aware) is tried in order and the first that parses wins. The
// object's "actions" must be a list (its items are returned as they are,
// compacted); else its "action" must be an object or a list (returned as
// the one move). An empty "actions" list gives an empty, non-nil slice and
// no error.
func ChunkActions(reply string) ([]json.RawMessage, error) {
	text := strings.TrimSpace(stripThink(reply))
	if blocks := fencedBlocks(text); len(blocks) > 0 {
		text = strings.TrimSpace(blocks[0])
	}
	if text == "" {
		return nil, errors.New("the reply is empty")
	}
	var obj map[string]json.RawMessage
	if json.Valid([]byte(text)) {
		if firstByte(json.RawMessage(text)) != '{' || json.Unmarshal([]byte(text), &obj) != nil {
			return nil, ErrChunkNotObject
		}
	} else {
		found := false
		for _, c := range ObjectCandidates(text) {
			if err := json.Unmarshal([]byte(c), &obj); err == nil {
				found = true
				break
			}
			obj = nil
		}
		if !found {
			return nil, ErrNoChunkObject
		}
	}
	if raw, ok := obj["actions"]; ok && firstByte(raw) == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err == nil {
			out := make([]json.RawMessage, len(items))
			for i, it := range items {
				out[i] = compactJSON(it)
			}
			return out, nil
		}
	}
	if raw, ok := obj["action"]; ok {
		if b := firstByte(raw); b == '{' || b == '[' {
			return []json.RawMessage{compactJSON(raw)}, nil
		}
	}
	return nil, ErrChunkNoActions
}

// ObjectCandidates lists the top-level balanced {...} spans of text in
// order. Double-quoted strings (with backslash escapes) are skipped
// wherever they appear, so braces inside them do not count; a span left
// open at the end is not listed.
func ObjectCandidates(text string) []string {
	var out []string
	depth, start := 0, -1
	inString, escape := false, false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if inString {
			switch {
			case escape:
				escape = false
			case c == '\\':
				escape = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 && start >= 0 {
					out = append(out, text[start:i+1])
					start = -1
				}
			}
		}
	}
	return out
}

// FirstByte is the first non-blank byte of raw JSON (0 when there is none):
// '{' for an object, '[' for a list.
func FirstByte(raw json.RawMessage) byte { return firstByte(raw) }
