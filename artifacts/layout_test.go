package artifacts

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testUID = "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"

func TestLayoutKeys(t *testing.T) {
	l := Layout{Prefix: "team-a", Namespace: "research", Evaluation: "qwen-sweep", UID: testUID}
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	got := []string{l.EvaluationPrefix(), l.ManifestKey(), l.ShardPrefix(3), l.ShardManifestKey(3), l.SegmentKey(3, 1), l.SegmentKey(12, 345)}
	want := []string{
		"team-a/research/qwen-sweep/" + testUID + "/",
		"team-a/research/qwen-sweep/" + testUID + "/manifest.json",
		"team-a/research/qwen-sweep/" + testUID + "/shards/0003/",
		"team-a/research/qwen-sweep/" + testUID + "/shards/0003/manifest.json",
		"team-a/research/qwen-sweep/" + testUID + "/shards/0003/traces/000001.jsonl",
		"team-a/research/qwen-sweep/" + testUID + "/shards/0012/traces/000345.jsonl",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	noPrefix := l
	noPrefix.Prefix = ""
	if got, want := noPrefix.ManifestKey(), "research/qwen-sweep/"+testUID+"/manifest.json"; got != want {
		t.Errorf("without a prefix: %q, want %q", got, want)
	}
}

func TestLayoutSegmentSeq(t *testing.T) {
	l := Layout{Namespace: "ns", Evaluation: "ev", UID: testUID}
	cases := []struct {
		key    string
		shard  int
		want   int
		wantOK bool
	}{
		{l.SegmentKey(2, 7), 2, 7, true},
		{l.SegmentKey(2, 7), 3, 0, false},
		{l.ShardManifestKey(2), 2, 0, false},
		{l.ShardPrefix(2) + "traces/000000.jsonl", 2, 0, false},
		{l.ShardPrefix(2) + "traces/7.jsonl", 2, 0, false},
		{l.ShardPrefix(2) + "traces/00000x.jsonl", 2, 0, false},
		{"other/" + l.SegmentKey(2, 7), 2, 0, false},
	}
	for _, tc := range cases {
		got, ok := l.SegmentSeq(tc.shard, tc.key)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("SegmentSeq(%d, %q) = %d, %v; want %d, %v", tc.shard, tc.key, got, ok, tc.want, tc.wantOK)
		}
	}
}

func TestLayoutValidateRefusesHostileNames(t *testing.T) {
	good := Layout{Prefix: "p", Namespace: "ns", Evaluation: "ev", UID: testUID}
	cases := []struct {
		name string
		edit func(*Layout)
		want string
	}{
		{"dotdot namespace", func(l *Layout) { l.Namespace = ".." }, "namespace"},
		{"slash in evaluation", func(l *Layout) { l.Evaluation = "a/../../b" }, "evaluation"},
		{"upper-case evaluation", func(l *Layout) { l.Evaluation = "Eval" }, "evaluation"},
		{"empty uid", func(l *Layout) { l.UID = "" }, "uid"},
		{"uid with a slash", func(l *Layout) { l.UID = "abcdefgh/../x" }, "uid"},
		{"prefix with dotdot", func(l *Layout) { l.Prefix = "a/.." }, "prefix"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := good
			tc.edit(&l)
			if err := l.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error naming %q", err, tc.want)
			}
		})
	}
	if err := good.Validate(); err != nil {
		t.Errorf("valid layout refused: %v", err)
	}
}

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
