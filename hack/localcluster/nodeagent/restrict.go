package nodeagent

import corev1 "k8s.io/api/core/v1"

// restrictArgv wraps argv so that the container runs under no_new_privs and
// a RuntimeDefault-like seccomp filter (`repot sandbox restrict-pod`) when
// its effective securityContext asks for seccompProfile RuntimeDefault: a
// process node then refuses user namespaces to it, as a real node does to a
// restricted pod. Other securityContext fields (runAsUser, capabilities,
// readOnlyRootFilesystem) are not enforced: processes keep the invoking
// user.
func restrictArgv(pod *corev1.Pod, c *corev1.Container, repotBin string, argv []string) []string {
	var profile *corev1.SeccompProfile
	if pod.Spec.SecurityContext != nil {
		profile = pod.Spec.SecurityContext.SeccompProfile
	}
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		profile = c.SecurityContext.SeccompProfile
	}
	if profile == nil || profile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		return argv
	}
	return append([]string{repotBin, "sandbox", "restrict-pod", "--"}, argv...)
}
