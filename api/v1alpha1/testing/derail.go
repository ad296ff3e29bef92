package testing

import "repot.dev/repot-operator/api/v1alpha1"

// Derail sets spec.derail: the checkpoint statement ("" leaves the
// default) and the conditions (none leaves the default seven).
func (w *EvaluationWrapper) Derail(statement v1alpha1.CheckpointStatement, conds ...v1alpha1.DerailCondition) *EvaluationWrapper {
	w.Spec.Derail = &v1alpha1.DerailSpec{CheckpointStatement: statement, Conditions: conds}
	return w
}
