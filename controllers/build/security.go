package build

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// nonRootUID is the user of the project's image.
const nonRootUID = 65532

// RestrictedPodSecurity is the pod security context of every pod that runs
// the project's image: non-root with the runtime's default seccomp profile.
func RestrictedPodSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](nonRootUID),
		RunAsGroup:     ptr.To[int64](nonRootUID),
		FSGroup:        ptr.To[int64](nonRootUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// RestrictedContainerSecurity is the security context of every container of
// the project's image: read-only root, no privilege escalation, no
// capabilities.
func RestrictedContainerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		ReadOnlyRootFilesystem:   ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(false),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// podIPEnv is the POD_IP variable that --listen=$(POD_IP):PORT refers to.
func podIPEnv() corev1.EnvVar {
	return corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{
		FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"},
	}}
}
