package results

import (
	"strings"

	"repot.dev/repot-operator/analysis/report"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
)

// provenanceEntries are the facts of what produced an evaluation's numbers,
// from its status: the problem-set hash and sandbox mode, then per model
// (in status order) everything status.models[].provenance records.
func provenanceEntries(e *repotv1.RepotEvaluation) []report.ProvenanceEntry {
	var out []report.ProvenanceEntry
	for _, kv := range [][2]string{{"problem set", e.Status.ProblemsHash}, {"sandbox mode", e.Status.SandboxMode}} {
		if kv[1] != "" {
			out = append(out, report.ProvenanceEntry{Model: report.AllModels, Item: kv[0], Value: kv[1]})
		}
	}
	for i := range e.Status.Models {
		out = append(out, ModelProvenanceEntries(e.Status.Models[i].Name, e.Status.Models[i].Provenance)...)
	}
	return out
}

// ModelProvenanceEntries are one model's provenance facts, in a fixed order
// (images, server args, revision, served models, sampling, chat-template
// kwargs, the runner's build); empty values are left out, and a nil p gives
// none. The export, the report and the local cluster's printout show these.
func ModelProvenanceEntries(model string, p *repotv1.ModelProvenance) []report.ProvenanceEntry {
	var out []report.ProvenanceEntry
	add := func(item, value string) {
		if value != "" {
			out = append(out, report.ProvenanceEntry{Model: model, Item: item, Value: value})
		}
	}
	if p == nil {
		return nil
	}
	for _, c := range p.Images {
		v := c.ImageID
		if v == "" {
			v = c.Image + " (no digest reported)"
		}
		add("image: "+c.Pod+"/"+c.Container, v)
	}
	add("server args", strings.Join(p.ServerArgs, " "))
	add("revision", p.Revision)
	add("operator version", p.OperatorVersion)
	add("operator commit", p.OperatorCommit)
	for _, s := range p.ServedModels {
		add("served model (/v1/models)", contract.ServedModel{ID: s.ID, Root: s.Root, MaxModelLen: s.MaxModelLen}.Describe())
	}
	add("server report error", p.ServerReportError)
	for _, nv := range p.Sampling {
		add("sampling: "+nv.Name, nv.Value)
	}
	for _, nv := range p.ChatTemplateKwargs {
		add("chat_template_kwargs: "+nv.Name, nv.Value)
	}
	add("runner repot version", p.RepotVersion)
	add("runner repot commit", p.RepotCommit)
	return out
}
