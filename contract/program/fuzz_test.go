package program

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"", "print(1)", "```python\nprint(1)\n```", "<think>x</think>```\na\n```\n```\nbb\n```",
		"</think>```py\nx```", "<think>", "````\n```\n````", "~~~\nx\n~~~", "```\nunterminated",
		"  ```\n  a\n  ```", "```x```", "\r\n```\r\nx\r\n```\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		got := Extract(reply)
		if len(got) > len(reply) {
			t.Fatalf("Extract grew the text: %d > %d", len(got), len(reply))
		}
		if strings.Contains(got, "<think>") && strings.Contains(got, "</think>") &&
			strings.Index(got, "<think>") < strings.Index(got, "</think>") && !strings.Contains(reply, "```") && !strings.Contains(reply, "~~~") {
			t.Fatalf("think section survived: %q", got)
		}
		if Extract(reply) != got {
			t.Fatal("Extract is not deterministic")
		}
	})
}

func FuzzParseMoves(f *testing.F) {
	for _, s := range []string{
		"moves = [(0, 1), (1, 2)]", "moves = [[0,2],[1,2]]", "moves=[]", "moves = ['a', \"b\", '\\x41']",
		"moves = [True, False, None]", "moves = [-1, 1e5, 0x1f, 1_0]", "moves = [{'a': 1}]",
		"moves = [1]\nmoves = [2]", "moves = [1,", "moves = [[[[[]]]]]", "moves = (1, 2,)",
		"moves = ['''x''' r'\\d' b'y']", "moves = [{1, 2}]", "moves = [- -1]", "moves = [(1)]",
		"moves = ['\\U0001F600\\ud800']", "moves = [1.5, .5, 5., -0]",
	} {
		f.Add(s, "")
		f.Add("", s)
	}
	f.Fuzz(func(t *testing.T, stdout, code string) {
		moves, err := ParseMoves(stdout, code)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if len(moves) > MaxMoves {
			t.Fatalf("%d moves over the limit", len(moves))
		}
		for _, m := range moves {
			if !json.Valid(m) {
				t.Fatalf("invalid JSON move %q from stdout %q code %q", m, stdout, code)
			}
		}
		// Printing the plan back as JSON must parse to the same moves.
		var b strings.Builder
		b.WriteString("moves = [")
		for i, m := range moves {
			if i > 0 {
				b.WriteString(", ")
			}
			b.Write(m)
		}
		b.WriteString("]")
		again, err := ParseMoves(b.String(), "")
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		if len(again) != len(moves) {
			t.Fatalf("re-parse gave %d moves, want %d", len(again), len(moves))
		}
		for i := range again {
			if string(again[i]) != string(moves[i]) {
				t.Fatalf("move %d: %s then %s", i, moves[i], again[i])
			}
		}
	})
}

func FuzzExtractActions(f *testing.F) {
	for _, s := range []string{
		"", " ", `{"actions": [[1,0,2]]}`, "```json\n{\"actions\": [[1]]}\n```", "```\n[[1]]\n```",
		`[[1,0,2], {"a": 1}]`, `{"action": {"m": 1}}`, `{"action": [1]}`, `{"moves": [[1]]}`,
		`x {"s": "}{\"", "actions": [1]} y`, `{bad} {"actions": [2]}`, "<think>{\"actions\": [1]}</think>[]",
		`"moves = [[1, 0, 2]]"`, "prose\nmoves = [(1, 'a')]\n", "moves = [", `{"actions": [1,`, "{{{{", "}}}{",
		`"\u00`, "```json", "<think>", `{"actions": null}`, `{"a": {"actions": [1]}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		moves, err := ExtractActions(reply)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			if moves != nil {
				t.Fatal("moves with an error")
			}
			return
		}
		if moves == nil {
			t.Fatal("nil moves without an error")
		}
		if len(moves) > MaxMoves {
			t.Fatalf("%d moves over the limit", len(moves))
		}
		for _, m := range moves {
			if !json.Valid(m) {
				t.Fatalf("invalid JSON move %q from %q", m, reply)
			}
		}
		again, err := ExtractActions(reply)
		if err != nil || !cmp.Equal(moves, again) {
			t.Fatal("ExtractActions is not deterministic")
		}
	})
}
