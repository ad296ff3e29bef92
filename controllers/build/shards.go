package build

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/runner/layout"
)

// LedgerConfigMaps are the empty ledgers of a model, one per shard. The
// operator creates them before the runner Job and never writes their data:
// the runner's ledger sidecar does. They outlive the servers and Jobs and
// go only with the evaluation.
func LedgerConfigMaps(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec) []*corev1.ConfigMap {
	n := int(e.Spec.ShardsPerModelOrDefault())
	out := make([]*corev1.ConfigMap, 0, n)
	for s := range n {
		cm := &corev1.ConfigMap{
			ObjectMeta: ChildMeta(e, LedgerName(e.Name, m.Name, s), m.Name, ComponentLedger),
			Data:       map[string]string{layout.LedgerRecordsKey: ""},
		}
		cm.Labels[LabelShard] = strconv.Itoa(s)
		out = append(out, cm)
	}
	return out
}
