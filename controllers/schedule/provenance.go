package schedule

import (
	"fmt"
	"strings"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// Bounds of status.history[].differences (the CRD's).
const (
	maxDifferences    = 32
	maxDifferenceText = 512
	// maxEventNote is the API server's bound on an event's note.
	maxEventNote = 1024
)

// provenanceDifferences says in what, other than time, run cur differed
// from run base, as their statuses recorded it: the problem set and sandbox
// mode, and per model (in cur's spec order, then models only base ran) the
// images, server arguments, revision, what the servers reported, sampling,
// chat-template kwargs and the runner's repot build. Each difference reads
// "model m: <what>: <base> -> <cur>". A model without provenance on either
// side, and what only one side's runners reported, are not differences:
// unknown is not different.
func provenanceDifferences(cur, base *repotv1.RepotEvaluation) []string {
	var out []string
	diff := func(what, was, is string) {
		if was != is {
			out = append(out, truncate(fmt.Sprintf("%s: %s -> %s", what, orUnset(was), orUnset(is)), maxDifferenceText))
		}
	}
	diff("problem set", base.Status.ProblemsHash, cur.Status.ProblemsHash)
	diff("sandbox mode", base.Status.SandboxMode, cur.Status.SandboxMode)
	baseModels := map[string]*repotv1.ModelStatus{}
	for i := range base.Status.Models {
		baseModels[base.Status.Models[i].Name] = &base.Status.Models[i]
	}
	seen := map[string]bool{}
	for _, m := range cur.Spec.Models {
		seen[m.Name] = true
		b, ok := baseModels[m.Name]
		if !ok {
			out = append(out, truncate(fmt.Sprintf("model %s: not in %s", m.Name, base.Name), maxDifferenceText))
			continue
		}
		var c *repotv1.ModelProvenance
		for i := range cur.Status.Models {
			if cur.Status.Models[i].Name == m.Name {
				c = cur.Status.Models[i].Provenance
			}
		}
		modelDifferences(m.Name, b.Provenance, c, diff)
	}
	for _, m := range base.Status.Models {
		if !seen[m.Name] {
			out = append(out, truncate(fmt.Sprintf("model %s: only in %s", m.Name, base.Name), maxDifferenceText))
		}
	}
	if len(out) > maxDifferences {
		more := len(out) - (maxDifferences - 1)
		out = append(out[:maxDifferences-1], fmt.Sprintf("and %d more differences", more))
	}
	return out
}

// modelDifferences reports one model's differences through diff.
func modelDifferences(model string, base, cur *repotv1.ModelProvenance, diff func(what, was, is string)) {
	if base == nil || cur == nil {
		return // not recorded (e.g. a run from before provenance existed): unknown, not different
	}
	p := "model " + model + ": "
	images := func(ps *repotv1.ModelProvenance) map[string]string {
		out := map[string]string{}
		for _, c := range ps.Images {
			id := c.ImageID
			if id == "" {
				id = c.Image
			}
			out[c.Pod+" container "+c.Container] = id
		}
		return out
	}
	bi, ci := images(base), images(cur)
	for _, c := range cur.Images {
		k := c.Pod + " container " + c.Container
		if _, ok := bi[k]; ok {
			diff(p+k+" image", bi[k], ci[k])
		}
	}
	diff(p+"server args", strings.Join(base.ServerArgs, " "), strings.Join(cur.ServerArgs, " "))
	diff(p+"revision", base.Revision, cur.Revision)
	// The operator's build compares only where both runs recorded it (an
	// operator before operatorVersion recorded none).
	if base.OperatorVersion != "" && cur.OperatorVersion != "" {
		diff(p+"operator version", base.OperatorVersion, cur.OperatorVersion)
		diff(p+"operator commit", base.OperatorCommit, cur.OperatorCommit)
	}
	// What the runners reported compares only where both runs' runners
	// reported.
	if !runnerReported(base) || !runnerReported(cur) {
		return
	}
	diff(p+"served models", servedModels(base.ServedModels), servedModels(cur.ServedModels))
	diff(p+"server report error", base.ServerReportError, cur.ServerReportError)
	nameValues(p+"sampling ", base.Sampling, cur.Sampling, diff)
	nameValues(p+"chat template kwarg ", base.ChatTemplateKwargs, cur.ChatTemplateKwargs, diff)
	diff(p+"runner repot version", base.RepotVersion, cur.RepotVersion)
	diff(p+"runner repot commit", base.RepotCommit, cur.RepotCommit)
}

// runnerReported says whether a runner's report reached the provenance.
func runnerReported(p *repotv1.ModelProvenance) bool {
	return p.RepotVersion != "" || p.RepotCommit != "" || len(p.ServedModels) > 0 || p.ServerReportError != "" ||
		len(p.Sampling) > 0 || len(p.ChatTemplateKwargs) > 0
}

// nameValues reports each name whose value differs, in cur's order then
// names only base has.
func nameValues(prefix string, base, cur []repotv1.NameValue, diff func(what, was, is string)) {
	b := map[string]string{}
	for _, nv := range base {
		b[nv.Name] = nv.Value
	}
	seen := map[string]bool{}
	for _, nv := range cur {
		seen[nv.Name] = true
		diff(prefix+nv.Name, b[nv.Name], nv.Value)
	}
	for _, nv := range base {
		if !seen[nv.Name] {
			diff(prefix+nv.Name, nv.Value, "")
		}
	}
}

func servedModels(ms []repotv1.ServedModel) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		s := m.ID
		if m.Root != "" && m.Root != m.ID {
			s += " (root " + m.Root + ")"
		}
		if m.MaxModelLen != nil {
			s += fmt.Sprintf(" max_model_len %d", *m.MaxModelLen)
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n-3], "") + "..."
}
