package results

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/planning"
)

// EvaluationResults are an evaluation's records as the operator counts them:
// the records of its ledger ConfigMaps in the reconciler's fixed order,
// restricted to the evaluation's own models and methods, each key once.
// Aggregating them gives the figures of the evaluation's status.
type EvaluationResults struct {
	Evaluation *repotv1.RepotEvaluation
	Records    []contract.Record
	// Problems are ledger lines that are not records (left out, as the
	// operator leaves them out).
	Problems []string
}

// ReadEvaluationResults reads an evaluation and its ledgers through c.
func ReadEvaluationResults(ctx context.Context, c client.Reader, namespace, name string) (*EvaluationResults, error) {
	e := &repotv1.RepotEvaluation{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, e); err != nil {
		return nil, fmt.Errorf("reading RepotEvaluation %s/%s: %w", namespace, name, err)
	}
	var cms corev1.ConfigMapList
	if err := c.List(ctx, &cms, client.InNamespace(namespace),
		client.MatchingLabels{build.LabelEvaluation: name, build.LabelComponent: build.ComponentLedger}); err != nil {
		return nil, fmt.Errorf("listing the ledger ConfigMaps of %s/%s: %w", namespace, name, err)
	}
	var ledgers []corev1.ConfigMap
	for _, cm := range cms.Items {
		if metav1.IsControlledBy(&cm, e) {
			ledgers = append(ledgers, cm)
		}
	}
	// The ledgers the operator reads: those it builds, by name.
	ledgers, _ = planning.ExpectedLedgers(e, ledgers)
	recs, problems := planning.ReadLedgers(ledgers)
	res := &EvaluationResults{Evaluation: e, Records: evaluationRecords(e, recs)}
	for _, p := range problems {
		res.Problems = append(res.Problems, p.String())
	}
	return res, nil
}

// evaluationRecords keeps the records the status counts
// (planning.CountedRecords), each key once (the record Dedupe keeps).
func evaluationRecords(e *repotv1.RepotEvaluation, records []contract.Record) []contract.Record {
	out, _ := summary.Dedupe(planning.CountedRecords(e, records))
	return out
}

// Meta describes the evaluation for a report: its name, how each model is
// served, and its Failed or Stalled conditions.
func (r *EvaluationResults) Meta(origin report.Origin) report.SourceMeta {
	e := r.Evaluation
	m := report.SourceMeta{Name: e.Namespace + "/" + e.Name, Origin: origin}
	for i := range e.Spec.Models {
		ms := &e.Spec.Models[i]
		info := report.ModelInfo{Name: ms.Name, ServedBy: report.ServedUnknown}
		switch ms.Kind() {
		case repotv1.ModelKindSimulated:
			info.ServedBy, info.Detail = report.ServedSimulated, "repot sim-server, profile "+ms.Simulated.Profile
		case repotv1.ModelKindVLLM:
			info.ServedBy, info.Detail = report.ServedVLLM, ms.VLLM.Model
		case repotv1.ModelKindEndpoint:
			info.ServedBy, info.Detail = report.ServedEndpoint, ms.Endpoint.ServedModelName
		}
		m.Models = append(m.Models, info)
	}
	if s := e.Status.Summary; s != nil && s.State != "" {
		note := "State " + string(s.State)
		if p := e.Status.Progress; p != nil {
			note += fmt.Sprintf(", %d of %d runs recorded", p.RunsDone, p.RunsTotal)
		}
		m.Notes = append(m.Notes, note+".")
	}
	for _, c := range e.Status.Conditions {
		if c.Status == metav1.ConditionTrue && (c.Type == repotv1.ConditionFailed || c.Type == repotv1.ConditionStalled) {
			m.Notes = append(m.Notes, fmt.Sprintf("%s: %s: %s", c.Type, c.Reason, c.Message))
		}
	}
	if n := len(r.Problems); n > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%d ledger line(s) are not records and are left out; the first: %s", n, r.Problems[0]))
	}
	m.Energy = evaluationEnergy(e)
	m.Provenance = provenanceEntries(e)
	return m
}

// Source is the evaluation as a report source.
func (r *EvaluationResults) Source(origin report.Origin) report.Source {
	meta := r.Meta(origin)
	s := report.FromRecords(meta.Name, origin, r.Records)
	s.Models, s.Notes, s.Energy, s.Provenance = meta.Models, meta.Notes, meta.Energy, meta.Provenance
	return s
}

// evaluationEnergy is the GPU use per model from the status:
// status.models[].gpuSecondsHeld and the measured energy of
// status.models[].gpu, over the problems solved by all methods together (a
// problem solved by two methods counts twice). A model with neither figure
// is left out.
func evaluationEnergy(e *repotv1.RepotEvaluation) []report.ModelEnergy {
	var out []report.ModelEnergy
	for _, m := range e.Status.Models {
		me := report.ModelEnergy{Model: m.Name, GPUSeconds: m.GPUSecondsHeld}
		if m.GPU != nil {
			me.Joules, me.Simulated = m.GPU.EnergyJoules, m.GPU.Simulated
		}
		if me.GPUSeconds <= 0 && me.Joules <= 0 {
			continue
		}
		for _, r := range m.Methods {
			me.Solved += int(r.Solved)
		}
		out = append(out, me)
	}
	return out
}
