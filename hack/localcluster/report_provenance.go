package main

import (
	"fmt"
	"io"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/cmd/repot/results"
)

// printProvenance prints what produced a model's numbers, as the export and
// the report show them (results.ModelProvenanceEntries): the imageID of each
// container that ran (the image digest the container runtime reported),
// what the server said of itself, the sampling sent and the
// runner's build. Nothing when the status has no provenance.
func printProvenance(w io.Writer, m *repotv1.ModelStatus) {
	for _, p := range results.ModelProvenanceEntries(m.Name, m.Provenance) {
		fmt.Fprintf(w, "  %s: %s\n", p.Item, p.Value)
	}
}
