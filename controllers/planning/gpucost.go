package planning

import (
	"bufio"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"repot.dev/repot-operator/analysis/gpucost"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// ledgerReadings returns the GPU readings of a model's ledgers. The
// ledger's model label, not the line, says whose readings they are; lines
// that are not readings are skipped (the readings are a cost estimate, and
// a bad line must not stop the status).
func ledgerReadings(ledgers []corev1.ConfigMap, model string) []contract.Reading {
	var out []contract.Reading
	for i := range ledgers {
		cm := &ledgers[i]
		if cm.Labels[build.LabelModel] != model {
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(cm.Data[contract.LedgerReadingsKey]))
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		for sc.Scan() {
			if r, err := contract.ParseReading([]byte(sc.Text())); err == nil {
				out = append(out, r)
			}
		}
	}
	return out
}

// modelGPUCost is a model's GPU status from its ledgers' readings, and its
// methods' estimated share of the energy (written into methods). It is nil
// for a model without telemetry or without readings yet. prev is the
// model's previous GPU status (for condition transition times).
func modelGPUCost(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, ledgers []corev1.ConfigMap, methods []repotv1.MethodResult, prev *repotv1.ModelGPUStatus, now metav1.Time) *repotv1.ModelGPUStatus {
	if !build.HasGPUTelemetry(m) {
		return nil
	}
	readings := ledgerReadings(ledgers, m.Name)
	if len(readings) == 0 {
		return nil
	}
	c := gpucost.Summarize(readings)
	st := &repotv1.ModelGPUStatus{
		Simulated:               c.Simulated,
		Readings:                int32(min(c.Readings, 1<<30)),
		GPUSecondsMeasured:      c.GPUSecondsMeasured,
		MeasuredSeconds:         c.WindowMillis / 1000,
		EnergyJoules:            int64((c.EnergyMillijoules + 500) / 1000),
		MeanUtilizationPermille: c.UtilPermille,
		PeakMemoryMiB:           int64(c.PeakMemoryBytes >> 20),
		XIDErrors:               int64(c.XIDErrors),
		ECCUncorrectedErrors:    int64(c.ECCUncorrected),
	}
	solved, tokens := make([]int64, len(methods)), make([]int64, len(methods))
	for i, r := range methods {
		solved[i], tokens[i] = int64(r.Solved), r.CompletionTokens
	}
	b := gpucost.Break(c, solved, tokens)
	st.JoulesPerSolvedProblem, st.CompletionTokensPerKilojoule = b.JoulesPerSolved, b.TokensPerKilojoule
	for i := range methods {
		methods[i].EstimatedEnergyJoules = ptrTo(b.MethodJoules[i])
		methods[i].EstimatedJoulesPerSolvedProblem = b.MethodJoulesPerSolved[i]
	}
	if prev != nil {
		st.Conditions = append(st.Conditions, prev.Conditions...)
	}
	cond := metav1.Condition{Type: repotv1.ConditionGPUHealthy, ObservedGeneration: e.Generation, LastTransitionTime: now}
	switch {
	case len(c.Errors) > 0 && (c.XIDErrors > 0 || c.ECCUncorrected > 0 || hasLost(c.Errors)):
		cond.Status, cond.Reason = metav1.ConditionFalse, repotv1.ReasonGPUErrors
		cond.Message = Truncate(strings.Join(c.Errors, "; "), 1024)
	case len(c.Errors) > 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, repotv1.ReasonTelemetryUnavailable
		cond.Message = Truncate("the GPU telemetry could not read the GPUs, so the cost is incomplete: "+strings.Join(c.Errors, "; "), 1024)
	default:
		cond.Status, cond.Reason = metav1.ConditionTrue, repotv1.ReasonNoGPUErrors
		cond.Message = fmt.Sprintf("%d readings, no GPU lost and no XID or uncorrected ECC error reported", c.Readings)
	}
	if c.Simulated {
		cond.Message = "SIMULATED GPU: " + cond.Message
	}
	apimeta.SetStatusCondition(&st.Conditions, cond)
	return st
}

func hasLost(errs []string) bool {
	for _, e := range errs {
		if strings.Contains(e, "is lost") {
			return true
		}
	}
	return false
}

func ptrTo[T any](v T) *T { return &v }
