package planning

import (
	"maps"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// The runner's identity may patch its evaluation's ledgers (build.RunnerRole:
// get and patch, by name), and a patch reaches the metadata as well as the
// data: a runner can move a ledger's owner reference to another
// evaluation, relabel it, or rewrite the annotations the operator writes on
// it. What the operator reads of a ledger therefore rests on what the
// runner cannot change: its name, which the operator chose (ExpectedLedgers),
// and its own status (infrastructure retries, infraRetries).

// ExpectedLedgers splits the ledger ConfigMaps that e controls (by owner
// reference) into the ones e expects and the strays. A ledger is expected
// when its name is one the operator builds for e's spec (build.LedgerConfigMaps:
// per model and shard the ledger and its spills): only e's runner may patch
// those names, and no patch can rename an object, so a ledger of another
// evaluation whose owner reference a runner moved to e is a stray. The
// expected ledgers carry the labels their name implies (model, shard,
// spill, evaluation, component), whatever labels they were patched to:
// everything that attributes records to models and shards reads those
// labels. Strays are ledgers of models removed from spec.models before
// the start (deleteRemovedModels deletes them) or objects whose owner
// reference was moved; their records are never read.
//
// ls is not modified; the expected ledgers have labels of their own.
func ExpectedLedgers(e *repotv1.RepotEvaluation, ls []corev1.ConfigMap) (expected, strays []corev1.ConfigMap) {
	labels := expectedLedgerLabels(e)
	for i := range ls {
		want, ok := labels[ls[i].Name]
		if !ok {
			strays = append(strays, ls[i])
			continue
		}
		cm := ls[i]
		cm.Labels = maps.Clone(want)
		expected = append(expected, cm)
	}
	return expected, strays
}

// expectedLedgerLabels maps the name of each ledger and spill the operator
// builds for e to the labels it builds it with.
func expectedLedgerLabels(e *repotv1.RepotEvaluation) map[string]map[string]string {
	out := map[string]map[string]string{}
	for i := range e.Spec.Models {
		for _, cm := range build.LedgerConfigMaps(e, &e.Spec.Models[i]) {
			out[cm.Name] = cm.Labels
		}
	}
	return out
}
