package results

import (
	"fmt"
	"strings"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/runner/report"
)

// provenanceEntries are the facts of what produced an evaluation's numbers,
// from its status: the problem-set hash and sandbox mode, then per model
// (in status order) everything status.models[].provenance records.
func provenanceEntries(e *repotv1.RepotEvaluation) []report.ProvenanceEntry {
	var out []report.ProvenanceEntry
	add := func(model, item, value string) {
		if value != "" {
			out = append(out, report.ProvenanceEntry{Model: model, Item: item, Value: value})
		}
	}
	add(report.AllModels, "problem set", e.Status.ProblemsHash)
	add(report.AllModels, "sandbox mode", e.Status.SandboxMode)
	for _, m := range e.Status.Models {
		p := m.Provenance
		if p == nil {
			continue
		}
		for _, c := range p.Images {
			v := c.ImageID
			if v == "" {
				v = c.Image + " (no digest reported)"
			}
			add(m.Name, "image: "+c.Pod+"/"+c.Container, v)
		}
		add(m.Name, "server args", strings.Join(p.ServerArgs, " "))
		add(m.Name, "revision", p.Revision)
		for _, s := range p.ServedModels {
			v := s.ID
			if s.Root != "" {
				v += ", root " + s.Root
			}
			if s.MaxModelLen != nil {
				v += fmt.Sprintf(", max_model_len %d", *s.MaxModelLen)
			}
			add(m.Name, "served model (/v1/models)", v)
		}
		add(m.Name, "server report error", p.ServerReportError)
		for _, nv := range p.Sampling {
			add(m.Name, "sampling: "+nv.Name, nv.Value)
		}
		for _, nv := range p.ChatTemplateKwargs {
			add(m.Name, "chat_template_kwargs: "+nv.Name, nv.Value)
		}
		add(m.Name, "runner repot version", p.RepotVersion)
		add(m.Name, "runner repot commit", p.RepotCommit)
	}
	return out
}
