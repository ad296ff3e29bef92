package planning

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"repot.dev/repot-operator/contract"
)

func TestSandboxModes(t *testing.T) {
	cm := func(mode string) corev1.ConfigMap {
		c := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "l"}}
		if mode != "" {
			c.Annotations = map[string]string{contract.LedgerSandboxModeAnnotation: mode}
		}
		return c
	}
	tests := []struct {
		name    string
		ledgers []corev1.ConfigMap
		want    string
	}{
		{"none reported", []corev1.ConfigMap{cm(""), cm("")}, ""},
		{"one mode", []corev1.ConfigMap{cm("none, seccomp, landlock ABI 6"), cm("none, seccomp, landlock ABI 6"), cm("")}, "none, seccomp, landlock ABI 6"},
		{"two modes sorted", []corev1.ConfigMap{cm("none, seccomp, no landlock"), cm("none, seccomp, landlock ABI 6")},
			"none, seccomp, landlock ABI 6; none, seccomp, no landlock"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sandboxModes(tt.ledgers); got != tt.want {
				t.Errorf("sandboxModes = %q, want %q", got, tt.want)
			}
		})
	}
	long := []corev1.ConfigMap{cm(strings.Repeat("a", 600)), cm(strings.Repeat("b", 600))}
	if got := sandboxModes(long); len(got) > 1024 {
		t.Errorf("sandboxModes is %d bytes, want at most 1024", len(got))
	}
}
