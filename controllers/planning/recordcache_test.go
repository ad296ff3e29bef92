package planning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/controllers/build"
)

// The aggregated results are computed again only when the generation or a
// ledger's resourceVersion changed, and never memoized without one.
func TestResultsMemo(t *testing.T) {
	cm := func(name, rv string) corev1.ConfigMap {
		return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv, Labels: map[string]string{build.LabelModel: "m", build.LabelShard: name[len(name)-1:]}}}
	}
	c := NewRecordCache()
	eval := types.NamespacedName{Namespace: "ns", Name: "ev"}
	computed := 0
	compute := func() EvaluationResults { computed++; return EvaluationResults{} }
	steps := []struct {
		name       string
		generation int64
		ledgers    []corev1.ConfigMap
		want       int
	}{
		{"first pass computes", 1, []corev1.ConfigMap{cm("l-0", "5"), cm("l-1", "6")}, 1},
		{"same ledgers in another order: memoized", 1, []corev1.ConfigMap{cm("l-1", "6"), cm("l-0", "5")}, 1},
		{"a ledger changed", 1, []corev1.ConfigMap{cm("l-0", "5"), cm("l-1", "7")}, 2},
		{"the spec changed", 2, []corev1.ConfigMap{cm("l-0", "5"), cm("l-1", "7")}, 3},
		{"a ledger without resourceVersion is never memoized", 2, []corev1.ConfigMap{cm("l-0", "")}, 4},
		{"... nor reused", 2, []corev1.ConfigMap{cm("l-0", "")}, 5},
	}
	for _, s := range steps {
		c.Results(eval, ResultsKey(s.generation, s.ledgers), compute)
		if computed != s.want {
			t.Fatalf("%s: computed %d times, want %d", s.name, computed, s.want)
		}
	}
	c.Forget(eval)
	c.Results(eval, ResultsKey(2, []corev1.ConfigMap{cm("l-0", "5"), cm("l-1", "7")}), compute)
	if computed != 6 {
		t.Errorf("after forget: computed %d times, want 6", computed)
	}
}
