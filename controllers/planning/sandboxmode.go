package planning

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"repot.dev/repot-operator/contract"
)

// sandboxModes joins the distinct sandbox modes the runners reported on
// their ledgers (annotation contract.LedgerSandboxModeAnnotation), sorted, with
// "; ", cut to the status field's 1024 bytes.
func sandboxModes(ledgers []corev1.ConfigMap) string {
	seen := map[string]bool{}
	var modes []string
	for i := range ledgers {
		m := ledgers[i].Annotations[contract.LedgerSandboxModeAnnotation]
		if m != "" && !seen[m] {
			seen[m] = true
			modes = append(modes, m)
		}
	}
	sort.Strings(modes)
	return Truncate(strings.Join(modes, "; "), 1024)
}
