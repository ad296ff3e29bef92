package nodeagent

import "testing"

func TestImageMatcher(t *testing.T) {
	m := ImageMatcher{Patterns: DefaultImagePatterns}
	for _, tc := range []struct {
		image string
		want  bool
	}{
		{"repot-operator:dev", true},
		{"repot-operator", true},
		{"ghcr.io/acme/repot-operator:v0.1.0", true},
		{"localhost:5000/repot-operator@sha256:abcd", true},
		{"repot:latest", true},
		{"vllm/vllm-openai:v0.9.2", false},
		{"repot-operator-evil/vllm:1", false},
		{"busybox", false},
		{"registry:5000/other:repot-operator", false},
	} {
		if got := m.Runnable(tc.image); got != tc.want {
			t.Errorf("Runnable(%q) = %v, want %v", tc.image, got, tc.want)
		}
	}
	glob := ImageMatcher{Patterns: []string{"example.com/team/*:v1"}}
	if !glob.Runnable("example.com/team/x:v1") || glob.Runnable("example.com/team/x:v2") {
		t.Errorf("glob pattern over the whole reference not honoured")
	}
}
