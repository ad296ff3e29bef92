package program

import (
	"encoding/json"
	"strings"
	"testing"
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
