package s3

import (
	"strings"
	"testing"
)

func TestCompleteLines(t *testing.T) {
	cases := []struct {
		name      string
		content   string
		off       int64
		wantN     int64
		wantLines int
	}{
		{"empty", "", 0, 0, 0},
		{"one line", "{}\n", 0, 3, 1},
		{"line being written", "{}\n{\"a\"", 0, 3, 1},
		{"from an offset", "{}\n{}\n{", 3, 3, 1},
		{"only a partial line", "{\"a\":", 0, 0, 0},
		{"long lines over chunks", strings.Repeat("x", 200<<10) + "\n" + strings.Repeat("y", 70<<10) + "\n" + "zz", 0, 270<<10 + 2, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, lines, err := completeLines(strings.NewReader(tc.content), tc.off, int64(len(tc.content)))
			if err != nil {
				t.Fatal(err)
			}
			if n != tc.wantN || lines != tc.wantLines {
				t.Errorf("completeLines = %d bytes, %d lines; want %d, %d", n, lines, tc.wantN, tc.wantLines)
			}
		})
	}
}
