package prompt

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
)

func TestChunkRoundTrip(t *testing.T) {
	p := hanoi3()
	tests := []struct {
		name string
		c    Chunk
	}{
		{"json, nothing verified", Chunk{Proposer: ChunkJSON, State: json.RawMessage(`{"a":1}`), Legal: []json.RawMessage{json.RawMessage(`[1,0,1]`)}, LegalTotal: 2, Size: 16}},
		{"code, verified tail, blocked, message", Chunk{Proposer: ChunkCode, Verified: 9,
			Tail: []json.RawMessage{json.RawMessage(`[1,0,2]`), json.RawMessage(`{"x":"y"}`)}, State: json.RawMessage(`{"a":[1,2]}`),
			Legal: []json.RawMessage{json.RawMessage(`[1,0,1]`)}, LegalTotal: 30,
			Blocked: []BlockedMove{{Move: json.RawMessage(`[3,0,1]`), Message: "disk 3 is under disk 2"}, {Move: json.RawMessage(`["x"]`), Message: "bad"}},
			Message: "The move [3,0,1] was rejected: disk 3 is under disk 2", Size: 200}},
		{"hidden prefix", Chunk{Proposer: ChunkJSON, HidePrefix: true, State: json.RawMessage(`{}`), Size: 4}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msgs := ChunkPrompt(p, tc.c)
			got, err := ParseChunk(msgs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.c, got.Chunk, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("chunk (-want +got):\n%s", diff)
			}
			if got.Environment != p.Environment || got.MaxSteps != p.MaxSteps || string(got.Goal) != oneLine(p.GoalState) || string(got.Initial) != oneLine(p.InitialState) {
				t.Errorf("problem lines: %+v", got)
			}
			wantSystem := ChunkSystemJSON
			if tc.c.Proposer == ChunkCode {
				wantSystem = System
			}
			if msgs[0].Content != wantSystem {
				t.Errorf("system message %q", msgs[0].Content)
			}
			if tc.c.HidePrefix && strings.Contains(msgs[1].Content, labelTail) {
				t.Error("a hidden prefix shows the verified moves")
			}
			// The other parsers do not take it for their prompt.
			if r, err := Parse(msgs); err != nil || r.Repair != nil {
				t.Errorf("Parse: %+v, %v", r, err)
			}
			if _, err := ParseRecovery(msgs); !errors.Is(err, ErrNotRecovery) {
				t.Errorf("ParseRecovery: %v", err)
			}
		})
	}
	if _, err := ParseChunk(Initial(p)); !errors.Is(err, ErrNotChunk) {
		t.Errorf("ParseChunk of a first-call prompt: %v", err)
	}
}

func TestNewChunk(t *testing.T) {
	p := hanoi3()
	e, _ := p.Env()
	s, _ := p.Initial()
	var prefix []envs.Action
	for _, m := range []string{`[1,0,2]`, `[2,0,1]`, `[1,2,1]`, `[3,0,2]`, `[1,1,0]`} {
		a, err := e.Normalize(p, s, json.RawMessage(m))
		if err != nil {
			t.Fatal(err)
		}
		prefix = append(prefix, a)
		s = e.Step(s, a).Next
	}
	blocked := []BlockedMove{{Move: json.RawMessage("[3, 0, 1]"), Message: "line\nbreak"}}
	c, err := NewChunk(e, ChunkCode, prefix, s, blocked, "last\nmessage", 8, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Verified != 5 || len(c.Tail) != TailLen || string(c.Tail[TailLen-1]) != "[1,1,0]" || c.Message != "last message" ||
		string(c.Blocked[0].Move) != "[3,0,1]" || c.Blocked[0].Message != "line break" || c.Size != 8 || c.LegalTotal != len(e.Legal(s)) {
		t.Errorf("chunk %+v", c)
	}
	h, err := NewChunk(e, ChunkJSON, prefix, s, nil, "", 8, true)
	if err != nil {
		t.Fatal(err)
	}
	if h.Verified != 0 || h.Tail != nil || !h.HidePrefix {
		t.Errorf("hidden chunk %+v", h)
	}
}

// FuzzParseChunk checks that ParseChunk never panics and that whatever it
// accepts has valid JSON and a positive size.
func FuzzParseChunk(f *testing.F) {
	p := hanoi3()
	f.Add(ChunkPrompt(p, Chunk{Proposer: ChunkJSON, State: json.RawMessage(`{}`), Size: 3})[1].Content)
	f.Add(ChunkPrompt(p, Chunk{Proposer: ChunkCode, HidePrefix: true, State: json.RawMessage(`[1]`), Size: 3,
		Blocked: []BlockedMove{{Move: json.RawMessage(`[1]`), Message: "m"}}})[1].Content)
	f.Add("Environment: x\nGoal state (JSON): {}\n" + ChunkMarker + "\nProposer: json\nVerified state (JSON): {}\n" + labelBlocked + "[{}]\n")
	f.Fuzz(func(t *testing.T, text string) {
		got, err := ParseChunk([]contract.Message{{Role: contract.RoleUser, Content: text}})
		if err != nil {
			return
		}
		c := got.Chunk
		if !json.Valid(got.Goal) || !json.Valid(c.State) || c.Size <= 0 || got.Environment == "" {
			t.Fatalf("accepted a bad prompt: %+v", got)
		}
		for _, b := range c.Blocked {
			if !json.Valid(b.Move) {
				t.Fatalf("accepted a bad rejected move: %+v", b)
			}
		}
	})
}
