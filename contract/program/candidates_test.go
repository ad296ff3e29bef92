package program

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func cand(start int, src string, moves ...string) Candidate {
	c := Candidate{Start: start, Source: src}
	for _, m := range moves {
		c.Moves = append(c.Moves, json.RawMessage(m))
	}
	return c
}

func TestCandidates(t *testing.T) {
	tests := []struct {
		name  string
		reply string
		want  []Candidate
	}{
		{"JSON extraction: the whole reply is a list", `[[1,0,2],[2,0,1]]`,
			[]Candidate{cand(0, SourceJSON, "[1,0,2]", "[2,0,1]"), cand(0, SourceSpan, "[1,0,2]", "[2,0,1]")}},
		{"JSON extraction: an object with a moves list", `{"moves": [{"disk": 1, "from": "A", "to": "C", "type": "move"}]}`,
			[]Candidate{cand(0, SourceJSON, `{"disk":1,"from":"A","to":"C","type":"move"}`), cand(10, SourceSpan, `{"disk":1,"from":"A","to":"C","type":"move"}`)}},
		{"JSON extraction: a fenced block", "Here:\n```json\n[[\"R\", 0, 1]]\n```\n",
			[]Candidate{cand(14, SourceJSON, `["R",0,1]`), cand(14, SourceSpan, `["R",0,1]`)}},
		{"a span needs lists, tuples or dicts", `the list [1, 2, 3] is not moves; nor is []`, nil},
		{"a mixed list is not a move list", `[[1,0,2], 3]`, nil},
		{"Python-literal tuples", `moves: [(1, 0, 2), ('B', 2, 0)]`,
			[]Candidate{cand(7, SourceSpan, "[1,0,2]", `["B",2,0]`)}},
		{"Python dicts with single quotes", `x [{'disk': 1, 'from': 'A'}] y`,
			[]Candidate{cand(2, SourceSpan, `{"disk":1,"from":"A"}`)}},
		{"brackets inside strings do not count", `[["a]b", 0, 1]]`,
			[]Candidate{cand(0, SourceJSON, `["a]b",0,1]`), cand(0, SourceSpan, `["a]b",0,1]`)}},
		{"escaped quotes inside strings", `[["a\"]", 0, 1]] tail`,
			[]Candidate{cand(0, SourceSpan, `["a\"]",0,1]`)}},
		{"an apostrophe in prose does not hide later spans", "I don't [know] yet.\nFinal: [[1,0,2]]",
			[]Candidate{cand(27, SourceSpan, "[1,0,2]")}},
		{"nested spans: outer and inner lists of lists", `[[[1,0,2]], [[2,0,1]]]`,
			[]Candidate{cand(0, SourceJSON, "[[1,0,2]]", "[[2,0,1]]"), cand(0, SourceSpan, "[[1,0,2]]", "[[2,0,1]]"), cand(1, SourceSpan, "[1,0,2]"), cand(12, SourceSpan, "[2,0,1]")}},
		{"think sections are removed", "<think>[[9,9,9]]</think>[[1,0,2]]",
			[]Candidate{cand(0, SourceJSON, "[1,0,2]"), cand(0, SourceSpan, "[1,0,2]")}},
		{"unbalanced brackets", `[[1,0,2]`, []Candidate{cand(1, SourceSpan, "1", "0", "2")}[:0]},
		{"two answers in order", "first [[1,0,2]] then [[2,0,1]]",
			[]Candidate{cand(6, SourceSpan, "[1,0,2]"), cand(21, SourceSpan, "[2,0,1]")}},
		// A JSON list is read by a JSON decoder: its strings mean what JSON
		// says (\/ is "/", not a backslash and a slash), brackets and
		// escaped quotes in them are content, and a stray apostrophe earlier
		// on the line (which hides the brackets from the span scanner) does
		// not hide it.
		{"a JSON escape in a note is read as JSON", `x [{"from": 0, "note": "a \/ b"}] y`,
			[]Candidate{cand(2, SourceSpan, `{"from":0,"note":"a \/ b"}`)}},
		{"brackets and escaped quotes in a note", `Answer: [{"from": 0, "to": 2, "note": "say \"[hi]\" ]["}] end`,
			[]Candidate{cand(8, SourceSpan, `{"from":0,"to":2,"note":"say \"[hi]\" ]["}`)}},
		{"prose, then move objects whose note holds a bracket, escaped quotes and an apostrophe",
			"Plan:\n" + `[{"block": "B", "from": 1, "to": 2, "type": "move", "note": "put ] aside, then \"the rest\" (it's fine)"}, {"block": "C", "from": 0, "to": 2, "type": "move", "note": "x"}]` + "\nDone.",
			[]Candidate{cand(6, SourceSpan, `{"block":"B","from":1,"to":2,"type":"move","note":"put ] aside, then \"the rest\" (it's fine)"}`, `{"block":"C","from":0,"to":2,"type":"move","note":"x"}`)}},
		{"nested lists in a note",
			`Plan: [{"block": "B", "note": [[1], ["]", [2]]]}, {"block": "C", "note": "[[x]] ]"}]`,
			[]Candidate{cand(6, SourceSpan, `{"block":"B","note":[[1],["]",[2]]]}`, `{"block":"C","note":"[[x]] ]"}`), cand(30, SourceSpan, "[1]", `["]",[2]]`)}},
		{"a closing bracket in the first string",
			`So: [{"note": "]", "block": "B"}, {"block": "C"}]`,
			[]Candidate{cand(4, SourceSpan, `{"note":"]","block":"B"}`, `{"block":"C"}`)}},
		{"a Python literal with an apostrophe inside double quotes",
			"Plan:\n" + `[{'block': 'B', 'from': 1, 'note': "it's ] fine"}, {'block': 'C', 'note': 'x'}]` + "\nDone.",
			[]Candidate{cand(6, SourceSpan, `{"block":"B","from":1,"note":"it's ] fine"}`, `{"block":"C","note":"x"}`)}},
		{"a stray apostrophe before a JSON list on its line", `[it's] [{"from": 0, "note": "x]"}]`,
			[]Candidate{cand(7, SourceSpan, `{"from":0,"note":"x]"}`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Candidates(tc.reply)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Candidates(%q) (-want +got):\n%s", tc.reply, d)
			}
		})
	}
}

func TestFinalMarker(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"no marker here", -1},
		{"Final answer: x", 6},
		{"The solution is; therefore", 17},
		{"finally the answers", -1},
		{"SOLUTION", 0},
		{"finalanswer", -1},
	}
	for _, tc := range tests {
		if got := FinalMarker(tc.text); got != tc.want {
			t.Errorf("FinalMarker(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestBalancedSpans(t *testing.T) {
	tests := []struct {
		text string
		want [][2]int
	}{
		{"a [b] c", [][2]int{{2, 5}}},
		{"[[x]]", [][2]int{{0, 5}, {1, 4}}},
		{`["]"]`, [][2]int{{0, 5}}},
		{`['\']']`, [][2]int{{0, 7}}},
		{"[\"open\n]", [][2]int{{0, 8}}},
		{"]][", nil},
	}
	for _, tc := range tests {
		if got := BalancedSpans(tc.text); !cmp.Equal(got, tc.want) {
			t.Errorf("BalancedSpans(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func FuzzCandidates(f *testing.F) {
	for _, s := range []string{`[[1,0,2]]`, `{"moves": [[1,0,2]]}`, "```json\n[[\"R\",0,1]]\n```", `[('a', 1)]`, `[["a\"]", 0]]`, "<think>[[", strings.Repeat("[", 100),
		"Plan:\n" + `[{"block": "B", "from": 1, "to": 2, "type": "move", "note": "put ] aside, then \"the rest\" (it's fine)"}, {"block": "C", "from": 0, "to": 2, "type": "move", "note": "x"}]` + "\nDone.",
		`Plan: [{"block": "B", "note": [[1], ["]", [2]]]}, {"block": "C", "note": "[[x]] ]"}]`,
		`So: [{"note": "]", "block": "B"}, {"block": "C"}]`,
		"Plan:\n" + `[{'block': 'B', 'from': 1, 'note': "it's ] fine"}, {'block': 'C', 'note': 'x'}]` + "\nDone."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		cs := Candidates(reply)
		if len(cs) > MaxCandidates {
			t.Fatalf("%d candidates", len(cs))
		}
		text := CleanReply(reply)
		for i, c := range cs {
			if c.Start < 0 || c.Start >= len(text) || len(c.Moves) == 0 {
				t.Fatalf("candidate %d: %+v", i, c)
			}
			if i > 0 && cs[i-1].Start > c.Start {
				t.Fatalf("candidates out of order")
			}
			for _, m := range c.Moves {
				if !json.Valid(m) {
					t.Fatalf("move %q is not JSON", m)
				}
			}
		}
		_ = FinalMarker(text)
	})
}

// FuzzCandidatesJSONNotes embeds a JSON move list whose string values are
// arbitrary (brackets, quotes, escapes, apostrophes) after arbitrary prose:
// the list must be found whole, at its offset, with the same values.
func FuzzCandidatesJSONNotes(f *testing.F) {
	for _, s := range [][3]string{
		{"Answer:", `say "[hi]"`, `]]`},
		{"I don't know [x", `a \ b`, `it's`},
		{"[it's]", `\u005d`, `\`},
		{`{"moves": [`, "[[", "}"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, prose, note1, note2 string) {
		// '<' could open a <think> section (which moves offsets) and a long
		// run of '[' spends the JSON budget: neither is what this tests.
		if strings.Contains(prose, "<") || strings.Count(prose, "[") > 64 || len(prose) > 4096 {
			t.Skip()
		}
		list := []map[string]any{{"from": 0, "to": 2, "note": note1}, {"from": 1, "to": 2, "note": note2}}
		b, err := json.Marshal(list)
		if err != nil {
			t.Fatal(err)
		}
		prefix := prose + "\n"
		reply := prefix + string(b) + "\nend"
		var want []any
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		for _, c := range Candidates(reply) {
			if c.Start != len(prefix) {
				continue
			}
			var got []any
			for _, m := range c.Moves {
				var v any
				if err := json.Unmarshal(m, &v); err != nil {
					t.Fatalf("move %q is not JSON: %v", m, err)
				}
				got = append(got, v)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("list at %d read differently (-want +got):\n%s", c.Start, d)
			}
			return
		}
		t.Fatalf("no candidate at offset %d in %q", len(prefix), reply)
	})
}

// BenchmarkCandidates reads a 64 KiB reply full of move lists and prose
// with apostrophes, the largest reply a 16384-token completion gives.
func BenchmarkCandidates(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 64<<10 {
		sb.WriteString("Let's try [[1, 0, 2], [2, 0, 1], [1, 2, 1]] or maybe ('a', [3]) then [[\"R\", 0, 1]]; don't stop.\n")
	}
	reply := sb.String()
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		Candidates(reply)
	}
}
