package program

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func movesText(ms []json.RawMessage) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

func TestParseMoves(t *testing.T) {
	tests := []struct {
		name, stdout, code string
		want               []string
	}{
		{"json", `moves = [[0, 2], [1, 2]]`, "", []string{"[0,2]", "[1,2]"}},
		{"python tuples", "moves = [(0, 2), (1, 2)]\n", "", []string{"[0,2]", "[1,2]"}},
		{"tuple plan", "moves = ((0, 2), (1, 2),)", "", []string{"[0,2]", "[1,2]"}},
		{"single element tuple", "moves = [(1,), (2)]", "", []string{"[1]", "2"}},
		{"empty plan", "moves = []", "", []string{}},
		{"parenthesised list", "moves = ([[0, 2], [1, 2]])", "", []string{"[0,2]", "[1,2]"}},
		{"parenthesised tuple", "moves = ((0, 2))", "", []string{"0", "2"}},
		{"parenthesised empty list", "moves = ( [] )", "", []string{}},
		{"one-move tuple", "moves = (\n  [0, 2],\n)", "", []string{"[0,2]"}},
		{"empty tuple move", "moves = [()]", "", []string{"[]"}},
		{"quotes", `moves = ['a', "b", 'it\'s', "say \"hi\""]`, "", []string{`"a"`, `"b"`, `"it's"`, `"say \"hi\""`}},
		{"escapes", `moves = ['\n\t\\', '\x41\u00e9\U0001F600', '\101']`, "", []string{`"\n\t\\"`, `"Aé😀"`, `"A"`}},
		{"raw and prefixed strings", `moves = [r'\d', u'x', b'y']`, "", []string{`"\\d"`, `"x"`, `"y"`}},
		{"implicit concatenation", `moves = ['ab' "cd"]`, "", []string{`"abcd"`}},
		{"triple quotes", `moves = ['''a'b''']`, "", []string{`"a'b"`}},
		{"html chars unescaped", `moves = ['<&>']`, "", []string{`"<&>"`}},
		{"constants", "moves = [True, False, None, true, false, null]", "", []string{"true", "false", "null", "true", "false", "null"}},
		{"numbers", "moves = [-1, +2, 007, 1_000, 1.5, -2e3, .5, 0x1F, -0b11, 0o7, - 3, 5., -0.0]", "",
			[]string{"-1", "2", "7", "1000", "1.5", "-2000.0", "0.5", "31", "-3", "7", "-3", "5.0", "-0.0"}},
		{"nested", "moves = [[[1, [2]], {'a': (1, 2)}], {1: 'x', None: 2}]", "", []string{`[[1,[2]],{"a":[1,2]}]`, `{"1":"x","null":2}`}},
		{"set", "moves = [{1, 2}]", "", []string{"[1,2]"}},
		{"trailing commas", "moves = [\n  (0, 1,),\n  (1, 2),\n]\n", "", []string{"[0,1]", "[1,2]"}},
		{"dict moves", `moves = [{"from": 0, "to": 2}]`, "", []string{`{"from":0,"to":2}`}},
		{"last line wins", "moves = [1]\nmoves = [2]\nmoves = [3, 4]\n", "", []string{"3", "4"}},
		{"text around", "Solving...\nFinal moves = [1, 2] (2 moves)\nbye", "", []string{"1", "2"}},
		{"no spaces", "moves=[1]", "", []string{"1"}},
		{"longer name ignored", "moves = [1]\nfinal_moves = [2]", "", []string{"1"}},
		{"comparison ignored", "moves == [1]\nmoves = [5]", "", []string{"5"}},
		{"code fallback", "nothing here", "moves = [(0, 1)]\nprint(moves)", []string{"[0,1]"}},
		{"code fallback skips non literals", "", "moves = [(0, 1), (1, 2)]\nmoves = [m for m in moves]\n", []string{"[0,1]", "[1,2]"}},
		{"code with comments", "", "moves = [\n    (0, 2),  # disk 1\n    ('#', 1),  # a '#' in a string\n]\n", []string{"[0,2]", `["#",1]`}},
		{"moves = inside a string", `moves = ["\\moves=(", 'moves = [9]']`, "", []string{`"\\moves=("`, `"moves = [9]"`}},
		{"malformed then good", "moves = [1, 2\nmoves = [3]", "", []string{"3"}},
		{"stdout preferred", "moves = [9]", "moves = [1]", []string{"9"}},
		{"invalid utf8 in string", "moves = ['\xff']", "", []string{`"` + "\ufffd" + `"`}},
		{"control char", "moves = ['\x01']", "", []string{`"\u0001"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMoves(tt.stdout, tt.code)
			if err != nil {
				t.Fatalf("ParseMoves: %v", err)
			}
			if diff := cmp.Diff(tt.want, movesText(got)); diff != "" {
				t.Errorf("moves (-want +got):\n%s", diff)
			}
			for _, m := range got {
				if !json.Valid(m) {
					t.Errorf("move %s is not valid JSON", m)
				}
			}
		})
	}
}

func TestParseMovesErrors(t *testing.T) {
	tests := []struct {
		name, stdout, code string
		wantSub            string
		noMoves            bool
	}{
		{"nothing", "hello", "print('hi')", "no `moves = [...]`", true},
		{"empty", "", "", "no `moves = [...]`", true},
		{"moves is not a list", "moves = None", "", "no `moves", true},
		{"unterminated", "moves = [1, 2", "", "output line 1: unterminated", false},
		{"last malformed wins", "moves = [1]\nmoves = [1, 2\n", "", "output line 2", false},
		{"object repr", "x\nmoves = [Move(0, 1)]", "", `output line 2: unexpected name "Move"`, false},
		{"inf", "moves = [inf]", "", "unexpected name", false},
		{"negative inf", "moves = [-inf]", "", "not a finite number", false},
		{"huge float", "moves = [1e999]", "", "bad number", false},
		{"complex", "moves = [1j]", "", "bad number", false},
		{"missing comma", "moves = [1 2]", "", "expected ','", false},
		{"parenthesised scalar", "moves = (5)", "", "output line 1: moves is not a list", false},
		{"too many parenthesised", "moves = ([" + strings.Repeat("0,", MaxMoves+1) + "])", "", "more than 100000 moves", false},
		{"unterminated string", "moves = ['abc]", "", "unterminated string", false},
		{"newline in string", "moves = ['a\n']", "", "newline inside a string", false},
		{"list dict key", "moves = [{[1]: 2}]", "", "dict key", false},
		{"code without literal", "", "moves = solve()\nmoves = [x for x in y]", "no complete literal", true},
		{"too many moves", "moves = [" + strings.Repeat("0,", MaxMoves+1) + "]", "", "more than 100000 moves", false},
		{"too deep", "moves = " + strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "", "deeper than 64", false},
		{"too many in code", "", "moves = [" + strings.Repeat("0,", MaxMoves+1) + "]", "code line 1: plan has more than", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMoves(tt.stdout, tt.code)
			if err == nil {
				t.Fatalf("ParseMoves = %v, want error containing %q", movesText(got), tt.wantSub)
			}
			if !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("error %q does not contain %q", err, tt.wantSub)
			}
			if errors.Is(err, ErrNoMoves) != tt.noMoves {
				t.Errorf("errors.Is(err, ErrNoMoves) = %v, want %v", errors.Is(err, ErrNoMoves), tt.noMoves)
			}
		})
	}
}

func TestParseMovesDepthLimitExact(t *testing.T) {
	ok := "moves = " + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := ParseMoves(ok, ""); err != nil {
		t.Errorf("depth %d: %v", MaxDepth, err)
	}
	ok = "moves = [" + strings.Repeat("0,", MaxMoves) + "]"
	got, err := ParseMoves(ok, "")
	if err != nil || len(got) != MaxMoves {
		t.Errorf("%d moves: got %d, %v", MaxMoves, len(got), err)
	}
}

func TestParseMovesManyBrokenOccurrences(t *testing.T) {
	// 200,000 unterminated literals: scanning must stay linear.
	text := strings.Repeat("moves = [(", 200_000)
	for _, tc := range []struct{ stdout, code string }{{text, ""}, {"", text}} {
		if _, err := ParseMoves(tc.stdout, tc.code); err == nil {
			t.Error("ParseMoves accepted unterminated literals")
		}
	}
}

func TestParseMovesTenMillionMoves(t *testing.T) {
	// Ten million moves: rejected once the limit is crossed, long before the
	// end of the text.
	text := "moves = [" + strings.Repeat("(0, 1), ", 10_000_000) + "]"
	_, err := ParseMoves(text, "")
	if err == nil || !strings.Contains(err.Error(), "more than 100000 moves") {
		t.Fatalf("err = %v", err)
	}
}
