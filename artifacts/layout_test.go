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
	s3, s12 := Shard{Model: "qwen-7b", Index: 3}, Shard{Model: "llama", Index: 12}
	got := []string{l.EvaluationPrefix(), l.ManifestKey(), l.ShardPrefix(s3), l.ShardManifestKey(s3), l.SegmentKey(s3, 1), l.SegmentKey(s12, 345)}
	want := []string{
		"team-a/research/qwen-sweep/" + testUID + "/",
		"team-a/research/qwen-sweep/" + testUID + "/manifest.json",
		"team-a/research/qwen-sweep/" + testUID + "/qwen-7b/shard-0003/",
		"team-a/research/qwen-sweep/" + testUID + "/qwen-7b/shard-0003/manifest.json",
		"team-a/research/qwen-sweep/" + testUID + "/qwen-7b/shard-0003/traces/000001.jsonl",
		"team-a/research/qwen-sweep/" + testUID + "/llama/shard-0012/traces/000345.jsonl",
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
	s2, s3, other := Shard{Model: "m", Index: 2}, Shard{Model: "m", Index: 3}, Shard{Model: "n", Index: 2}
	cases := []struct {
		key    string
		shard  Shard
		want   int
		wantOK bool
	}{
		{l.SegmentKey(s2, 7), s2, 7, true},
		{l.SegmentKey(s2, 7), s3, 0, false},
		{l.SegmentKey(s2, 7), other, 0, false},
		{l.ShardManifestKey(s2), s2, 0, false},
		{l.ShardPrefix(s2) + "traces/000000.jsonl", s2, 0, false},
		{l.ShardPrefix(s2) + "traces/7.jsonl", s2, 0, false},
		{l.ShardPrefix(s2) + "traces/00000x.jsonl", s2, 0, false},
		{"other/" + l.SegmentKey(s2, 7), s2, 0, false},
	}
	for _, tc := range cases {
		got, ok := l.SegmentSeq(tc.shard, tc.key)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("SegmentSeq(%v, %q) = %d, %v; want %d, %v", tc.shard, tc.key, got, ok, tc.want, tc.wantOK)
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

func TestShardValidate(t *testing.T) {
	cases := []struct {
		s    Shard
		want string
	}{
		{Shard{Model: "qwen-7b", Index: 0}, ""},
		{Shard{Model: "m", Index: MaxShards - 1}, ""},
		{Shard{Model: "m", Index: -1}, "out of range"},
		{Shard{Model: "m", Index: MaxShards}, "out of range"},
		{Shard{Model: "../x", Index: 0}, "model"},
		{Shard{Model: "Qwen", Index: 0}, "model"},
		{Shard{Model: "", Index: 0}, "model"},
	}
	for _, tc := range cases {
		err := tc.s.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v.Validate() = %v, want %q", tc.s, err, tc.want)
		}
	}
}
