package program

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func wantActions(ms ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		out[i] = json.RawMessage(m)
	}
	return out
}

func TestExtractActions(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply string
		want  []json.RawMessage
		// err is a substring of the error; "" when none is expected.
		err   string
		empty bool // the error wraps ErrEmptyReply
	}{
		{name: "canonical object", reply: `{"actions": [[1, 0, 2], [2, 0, 1]]}`, want: wantActions(`[1,0,2]`, `[2,0,1]`)},
		{name: "object in prose", reply: "Let me think.\nThe answer is {\"actions\": [{\"a\": 1}]} as shown.", want: wantActions(`{"a":1}`)},
		{name: "json fence", reply: "Plan:\n```json\n{\"actions\": [[1,0,2]]}\n```\nDone.", want: wantActions(`[1,0,2]`)},
		{name: "bare fence", reply: "```\n{\"moves\": [[1,0,2]]}\n```", want: wantActions(`[1,0,2]`)},
		{name: "first fence wins", reply: "```json\n{\"actions\": [1]}\n```\n```json\n{\"actions\": [2]}\n```", want: wantActions(`1`)},
		{name: "think stripped", reply: "<THINK>{\"actions\": [9]}</think>{\"actions\": [[0,1]]}", want: wantActions(`[0,1]`)},
		{name: "top-level array", reply: ` [[1,0,2], {"x": [1, 2]}] `, want: wantActions(`[1,0,2]`, `{"x":[1,2]}`)},
		{name: "top-level array in fence", reply: "```json\n[[0,1]]\n```", want: wantActions(`[0,1]`)},
		{name: "single action object", reply: `{"action": {"move": "a"}}`, want: wantActions(`{"move":"a"}`)},
		{name: "single action list", reply: `{"action": [1, 0, 2]}`, want: wantActions(`[1,0,2]`)},
		{name: "action scalar is not a move", reply: `{"action": 3}`, err: `no "actions" list`},
		{name: "moves key", reply: `{"moves": [[1,0,2]]}`, want: wantActions(`[1,0,2]`)},
		{name: "actions before moves", reply: `{"moves": [[9]], "actions": [[1]]}`, want: wantActions(`[1]`)},
		{name: "actions not a list falls to moves", reply: `{"actions": "none", "moves": [[1]]}`, want: wantActions(`[1]`)},
		{name: "empty actions list", reply: `{"actions": []}`, want: wantActions()},
		{name: "first parsable object is used", reply: `{bad} then {"note": 1} then {"actions": [[1]]}`, err: `no "actions" list`},
		{name: "braces in strings", reply: `{"s": "}{", "actions": [["}"]]}`, want: wantActions(`["}"]`)},
		{name: "escaped quote", reply: `x {"s": "a\"}", "actions": [[1]]} y`, want: wantActions(`[1]`)},
		{name: "object without keys, moves line fallback", reply: "{\"plan\": 1}\nmoves = [[1, 0, 2]]", want: wantActions(`[1,0,2]`)},
		{name: "python literal fallback", reply: "The final answer:\nmoves = [(1, 0, 2), ('a', \"b\")]\n", want: wantActions(`[1,0,2]`, `["a","b"]`)},
		{name: "json string wrapping moves", reply: `"moves = [[1, 0, 2]]\n"`, want: wantActions(`[1,0,2]`)},
		{name: "json string wrapping a python literal", reply: `"prose then moves = [(1, \"A\"), (2, \"B\")]"`, want: wantActions(`[1,"A"]`, `[2,"B"]`)},
		{name: "think, upper-case fence, single action", reply: "<think>{\"actions\": [1]}</think>\nSo:\n```JSON\n{\"note\": \"}{\", \"action\": [1, 0, 2]}\n```", want: wantActions(`[1,0,2]`)},
		{name: "empty moves line does not count", reply: "moves = []", err: "no JSON object"},
		{name: "prose only", reply: "I could not find a plan.", err: "no JSON object"},
		{name: "scalar JSON", reply: `42`, err: "not an object"},
		{name: "string JSON", reply: `"just words"`, err: "not an object"},
		{name: "invalid object", reply: `{"actions": [1, 2,}`, err: "is valid JSON"},
		{name: "empty", reply: "", err: "empty reply", empty: true},
		{name: "blank", reply: " \n\t", err: "empty reply", empty: true},
		{name: "only thinking", reply: "<think>moves?</think>", err: "empty reply", empty: true},
		{name: "truncated", reply: "```json\n{\"actions\": [[1,0,2], [2,", err: "no JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ExtractActions(tc.reply)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ExtractActions(%q) = %s, %v; want error containing %q", tc.reply, got, err, tc.err)
				}
				if errors.Is(err, ErrEmptyReply) != tc.empty {
					t.Errorf("errors.Is(%v, ErrEmptyReply) = %v, want %v", err, !tc.empty, tc.empty)
				}
				return
			}
			if err != nil {
				t.Fatalf("ExtractActions(%q): %v", tc.reply, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ExtractActions(%q) (-want +got):\n%s", tc.reply, diff)
			}
		})
	}
}

func TestExtractActionsLimit(t *testing.T) {
	reply := `{"actions": [` + strings.Repeat("1,", MaxMoves) + `1]}`
	if _, err := ExtractActions(reply); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a list of %d moves: err %v, want the limit", MaxMoves+1, err)
	}
}
