package program

import (
	"encoding/json"
	"errors"
)

// ErrChunkNoActions is ChunkActions' error for a JSON object with neither
// an "actions" list nor an "action" move; a reply without a JSON object
// gives JSONObject's errors. Each is a model failure; the message is shown
// to the model as the verifier's message of the next proposal prompt.
var ErrChunkNoActions = errors.New(`the JSON object has no "actions" list and no "action" move`)

// ChunkActions reads the moves of a VEX JSON chunk reply, shaped
// {"actions": [...]} (or {"action": MOVE} for a single move), the way the
// reference's JSON proposer reads it: the reply's JSON object
// (JSONObject). The object's "actions" must be a list (its items are returned as they are,
// compacted); else its "action" must be an object or a list (returned as
// the one move). An empty "actions" list gives an empty, non-nil slice and
// no error.
func ChunkActions(reply string) ([]json.RawMessage, error) {
	obj, err := JSONObject(reply)
	if err != nil {
		return nil, err
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
