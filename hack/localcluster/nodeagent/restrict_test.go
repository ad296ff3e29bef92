package nodeagent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestRestrictArgv(t *testing.T) {
	rd := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	unconfined := &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
	argv := []string{"/bin/repot", "run"}
	wrapped := []string{"/bin/repot", "sandbox", "restrict-pod", "--", "/bin/repot", "run"}
	tests := []struct {
		name     string
		pod, ctr *corev1.SeccompProfile
		want     []string
	}{
		{"no profile", nil, nil, argv},
		{"pod RuntimeDefault", rd, nil, wrapped},
		{"container RuntimeDefault", nil, rd, wrapped},
		{"container overrides pod", rd, unconfined, argv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := &corev1.Pod{Spec: corev1.PodSpec{SecurityContext: &corev1.PodSecurityContext{SeccompProfile: tt.pod}}}
			c := &corev1.Container{SecurityContext: &corev1.SecurityContext{SeccompProfile: tt.ctr}}
			if diff := cmp.Diff(tt.want, restrictArgv(pod, c, "/bin/repot", argv)); diff != "" {
				t.Errorf("argv (-want +got):\n%s", diff)
			}
		})
	}
}
