package planning

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// sealAfter is when the pass that records an evaluation's end looks
// again, to seal its ledgers.
const sealAfter = time.Second

// planSeal seals the ledgers of an evaluation whose stored status already
// records its end (status.completionTime, written by an earlier pass from
// the ledgers as the API server held them): each ledger and spill without
// the sealed annotation gets it. The manager's cache drops the data of a
// sealed ledger (controllers.CacheOptions), so that a finished evaluation
// holds no ledger text in memory, and the snapshot reads a sealed
// evaluation's ledgers from the API server for one pass at a time
// (Sealed).
func (p *Plan) planSeal(e *repotv1.RepotEvaluation, w *World) {
	if e.Status.CompletionTime == nil {
		// This pass records the end; nothing else may bring the pass
		// after it, which seals.
		if len(w.Ledgers) > 0 {
			p.requeueIn(sealAfter)
		}
		return
	}
	for i := range w.Ledgers {
		cm := &w.Ledgers[i]
		if IsSealed(cm) || cm.DeletionTimestamp != nil {
			continue
		}
		p.Annotate = append(p.Annotate, Annotate{Object: cm.DeepCopy(), Annotations: map[string]string{
			build.AnnotationSealed: build.SealedValue,
		}})
	}
}

// IsSealed says whether a ledger carries the sealed annotation (planSeal).
func IsSealed(cm *corev1.ConfigMap) bool {
	_, ok := cm.Annotations[build.AnnotationSealed]
	return ok
}

// Sealed says whether any of the ledgers is sealed: the manager's cache
// holds none of its data, and the ledgers are to be read from the API
// server.
func Sealed(ledgers []corev1.ConfigMap) bool {
	for i := range ledgers {
		if IsSealed(&ledgers[i]) {
			return true
		}
	}
	return false
}
