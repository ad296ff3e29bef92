package main

import (
	"fmt"
	"io"
	"strings"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// printProvenance prints what produced a model's numbers: the imageID of
// each container that ran (on process nodes, the sha256 of the host's repot
// binary), what the server said of itself, the sampling sent and the
// runner's build. Nothing when the status has no provenance.
func printProvenance(w io.Writer, m *repotv1.ModelStatus) {
	p := m.Provenance
	if p == nil {
		return
	}
	for _, c := range p.Images {
		id := c.ImageID
		if id == "" {
			id = c.Image + " (no digest reported)"
		}
		fmt.Fprintf(w, "  image %s/%s: %s\n", c.Pod, c.Container, id)
	}
	for _, s := range p.ServedModels {
		line := s.ID
		if s.Root != "" {
			line += ", root " + s.Root
		}
		if s.MaxModelLen != nil {
			line += fmt.Sprintf(", max_model_len %d", *s.MaxModelLen)
		}
		fmt.Fprintf(w, "  server reports (/v1/models): %s\n", line)
	}
	if p.ServerReportError != "" {
		fmt.Fprintf(w, "  server report: %s\n", p.ServerReportError)
	}
	if len(p.Sampling)+len(p.ChatTemplateKwargs) > 0 {
		var parts []string
		for _, nv := range p.Sampling {
			parts = append(parts, nv.Name+"="+nv.Value)
		}
		for _, nv := range p.ChatTemplateKwargs {
			parts = append(parts, "chat_template_kwargs."+nv.Name+"="+nv.Value)
		}
		fmt.Fprintf(w, "  sampling: %s\n", strings.Join(parts, ", "))
	}
	if p.RepotVersion != "" || p.RepotCommit != "" {
		fmt.Fprintf(w, "  runner build: repot %s %s\n", dash(p.RepotVersion), dash(p.RepotCommit))
	}
}
