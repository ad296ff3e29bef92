package program

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func raws(ms ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(ms))
	for i, m := range ms {
		out[i] = json.RawMessage(m)
	}
	return out
}

func TestChunkActions(t *testing.T) {
	tests := []struct {
		name    string
		reply   string
		want    []json.RawMessage
		wantErr error
	}{
		{"bare object", `{"actions": [[1, 0, 2], [2, 0, 1]]}`, raws("[1,0,2]", "[2,0,1]"), nil},
		{"object moves", `{"actions":[{"disk": 1, "from": "A"}]}`, raws(`{"disk":1,"from":"A"}`), nil},
		{"prose around", `Next: {"actions": [[1,0,2]]} as asked.`, raws("[1,0,2]"), nil},
		{"fenced", "Here:\n```json\n{\"actions\": [[1,0,2]]}\n```\nDone {\"actions\": [[9]]}", raws("[1,0,2]"), nil},
		{"think removed", `<think>{"actions": [[9]]}</think>{"actions": [[1,0,2]]}`, raws("[1,0,2]"), nil},
		{"brace in a string", `Note "}{" then {"actions": [["a}"]]}`, raws(`["a}"]`), nil},
		{"escaped quote in a string", `{"actions": [["a\"}"]]}`, raws(`["a\"}"]`), nil},
		{"first object that parses", `{bad} {"actions": [[1]]} {"actions": [[2]]}`, raws("[1]"), nil},
		{"first object without actions wins", `{"x": 1} {"actions": [[2]]}`, nil, ErrChunkNoActions},
		{"single action", `{"action": ["actor1", "agent1"]}`, raws(`["actor1","agent1"]`), nil},
		{"single action object", `{"action": {"block": "A"}}`, raws(`{"block":"A"}`), nil},
		{"action is a string", `{"action": "left"}`, nil, ErrChunkNoActions},
		{"actions not a list, action used", `{"actions": 3, "action": [1]}`, raws("[1]"), nil},
		{"empty list", `{"actions": []}`, raws(), nil},
		{"a list is not an object", `[[1,0,2]]`, nil, ErrNotJSONObject},
		{"null", `null`, nil, ErrNotJSONObject},
		{"no object", `I would move disk 1 first.`, nil, ErrNoJSONObject},
		{"unclosed", `{"actions": [[1,0,2]`, nil, ErrNoJSONObject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChunkActions(tc.reply)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ChunkActions("  "); err == nil {
		t.Error("an empty reply was read")
	}
}

func TestObjectCandidates(t *testing.T) {
	got := ObjectCandidates(`a {"b": {"c": "}"}} x "{" {d} {unclosed`)
	if diff := cmp.Diff([]string{`{"b": {"c": "}"}}`, `{d}`}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// FuzzChunkActions checks that ChunkActions never panics and that whatever
// it returns is valid JSON.
func FuzzChunkActions(f *testing.F) {
	for _, s := range []string{
		`{"actions": [[1, 0, 2]]}`, `x {"actions": [{"a": 1}]} y`, "```json\n{\"actions\": []}\n```", `{"action": [1]}`,
		`<think>{</think>{"actions": [["\"}"]]}`, `{"actions": [`, `[1]`, `"{"`, `{{{{}}}}`, `{"actions": [1, "a", null]}`,
		"{\"action\": {\"x\": 1}}\n{\"actions\": [2]}", `\"{"actions":[[1]]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		got, err := ChunkActions(reply)
		if err != nil {
			if got != nil {
				t.Fatalf("moves %v with error %v", got, err)
			}
			return
		}
		for _, m := range got {
			if !json.Valid(m) {
				t.Fatalf("invalid move %q", m)
			}
		}
		if !strings.Contains(reply, "{") {
			t.Fatalf("moves %v from a reply without an object", got)
		}
	})
}
