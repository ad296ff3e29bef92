package program

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrEmptyReply is wrapped by the error ExtractActions returns when the
// reply holds nothing once its reasoning sections are removed.
var ErrEmptyReply = errors.New("empty reply")

// thinkSection and firstFence are the reference parser's cleaning: closed
// <think>...</think> sections (any case, across lines) are cut out, then
// the first ``` fenced block, with or without a "json" info string, stands
// for the whole reply. RE2 matches both in linear time.
var (
	thinkSection = regexp.MustCompile("(?is)<think>.*?</think>")
	firstFence   = regexp.MustCompile("(?is)```(?:json)?\\s*(.*?)```")
)

// ExtractActions returns the moves of a chain-of-thought reply, each as
// compact JSON, in the shapes the paper's reference parser accepts:
//
//   - the reply is cleaned: closed <think> sections are cut and, when it has
//     a ``` fenced block, the first block's content replaces it;
//   - a cleaned reply that is a JSON array is the move list;
//   - otherwise the reply's JSON object (the whole cleaned reply, else the
//     first balanced {...} span that parses) gives the list under "actions"
//     (a list), "action" (one move, an object or a list) or "moves" (a list);
//   - otherwise, or when that object has none of these keys, a
//     `moves = [...]` line (JSON or Python literal), found in the reply
//     decoded as a JSON string or in the raw reply, is the list (an empty
//     list there does not count).
//
// Moves are not checked against any environment. It never panics; every
// error is a model failure with a reason.
func ExtractActions(text string) ([]json.RawMessage, error) {
	clean := cleanReply(text)
	if strings.HasPrefix(clean, "[") {
		if moves, ok := jsonList([]byte(clean)); ok {
			return limitMoves(moves)
		}
	}
	obj, err := cleanObject(clean)
	if err == nil {
		if moves, ok := objectMoves(obj); ok {
			return limitMoves(moves)
		}
		err = errors.New(`the reply's JSON object has no "actions" list, "action" move or "moves" list`)
	}
	if moves := fallbackMoves(text); moves != nil {
		return limitMoves(moves)
	}
	return nil, err
}

// cleanReply trims the reply, cuts closed <think> sections and keeps the
// first fenced block's content when there is one.
func cleanReply(text string) string {
	text = strings.TrimSpace(text)
	text = strings.TrimSpace(thinkSection.ReplaceAllString(text, ""))
	if m := firstFence.FindStringSubmatchIndex(text); m != nil {
		text = strings.TrimSpace(text[m[2]:m[3]])
	}
	return text
}

// Errors of JSONObject: the reply has no JSON object, or its JSON is
// something else.
var (
	ErrNoJSONObject  = errors.New("the reply holds no JSON object")
	ErrNotJSONObject = errors.New("the reply's JSON is not an object")
)

// JSONObject reads the JSON object of a model's reply the way the
// reference's extract_json_object does: the reply cleaned (cleanReply),
// then the whole text when it is JSON (it must be an object), else the
// first top-level balanced {...} span (ObjectCandidates) that parses. It is
// the one reader of JSON replies: cot and self-consistency
// (ExtractActions), VEX chunks (ChunkActions) and the step agent's action
// choices (prompt.ParseStepChoice). An empty reply's error wraps
// ErrEmptyReply.
func JSONObject(reply string) (map[string]json.RawMessage, error) {
	return cleanObject(cleanReply(reply))
}

// cleanObject is JSONObject of a reply already cleaned.
func cleanObject(clean string) (map[string]json.RawMessage, error) {
	if clean == "" {
		return nil, fmt.Errorf("%w: no text outside reasoning sections", ErrEmptyReply)
	}
	var obj map[string]json.RawMessage
	if json.Valid([]byte(clean)) {
		if clean[0] != '{' || json.Unmarshal([]byte(clean), &obj) != nil {
			return nil, ErrNotJSONObject
		}
		return obj, nil
	}
	spans := ObjectCandidates(clean)
	for _, c := range spans {
		if json.Unmarshal([]byte(c), &obj) == nil {
			return obj, nil
		}
		obj = nil
	}
	if len(spans) > 0 {
		return nil, fmt.Errorf("%w: none of the reply's %d {...} spans is valid JSON", ErrNoJSONObject, len(spans))
	}
	return nil, ErrNoJSONObject
}

// objectMoves reads the move list of a reply object, by key precedence
// "actions", "action", "moves".
func objectMoves(obj map[string]json.RawMessage) ([]json.RawMessage, bool) {
	if v, ok := obj["actions"]; ok {
		if moves, ok := jsonList(v); ok {
			return moves, true
		}
	}
	if v, ok := obj["action"]; ok {
		if b := firstByte(v); b == '{' || b == '[' {
			return []json.RawMessage{compactJSON(v)}, true
		}
	}
	if v, ok := obj["moves"]; ok {
		if moves, ok := jsonList(v); ok {
			return moves, true
		}
	}
	return nil, false
}

// jsonList decodes raw as a JSON array, each element compacted; ok is false
// when raw is not one.
func jsonList(raw []byte) ([]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' || !json.Valid(raw) {
		return nil, false
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, false
	}
	for i, e := range elems {
		elems[i] = compactJSON(e)
	}
	if elems == nil {
		elems = []json.RawMessage{}
	}
	return elems, true
}

// fallbackMoves is the reference's last resort: the trimmed raw reply,
// decoded when it is a JSON string, or else as it is, holding a
// `moves = [...]` line; nil when neither has a non-empty one.
func fallbackMoves(text string) []json.RawMessage {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	if text[0] == '"' {
		var s string
		if json.Unmarshal([]byte(text), &s) == nil {
			if moves, err := ParseMoves(s, ""); err == nil && len(moves) > 0 {
				return moves
			}
		}
	}
	if moves, err := ParseMoves(text, ""); err == nil && len(moves) > 0 {
		return moves
	}
	return nil
}

// limitMoves rejects a list over MaxMoves, as ParseMoves does.
func limitMoves(moves []json.RawMessage) ([]json.RawMessage, error) {
	if len(moves) > MaxMoves {
		return nil, fmt.Errorf("the move list has %d moves, more than the limit of %d", len(moves), MaxMoves)
	}
	return moves, nil
}
