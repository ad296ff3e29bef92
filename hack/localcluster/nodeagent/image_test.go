package nodeagent

import (
	"os"
	"path/filepath"
	"testing"
)

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

// TestHostBinaryImageID: the imageID of a process node's containers is the
// sha256 of the host binary's bytes, named with its path.
func TestHostBinaryImageID(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "repot")
	if err := os.WriteFile(bin, []byte("abc"), 0o755); err != nil {
		t.Fatal(err)
	}
	// sha256("abc"), FIPS 180-2's example.
	want := "process://" + bin + "@sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := hostBinaryImageID(bin); got != want {
		t.Errorf("imageID %q, want %q", got, want)
	}
	missing := filepath.Join(t.TempDir(), "none")
	if got := hostBinaryImageID(missing); got != "process://"+missing {
		t.Errorf("imageID of a missing binary %q, want its path alone", got)
	}
}
