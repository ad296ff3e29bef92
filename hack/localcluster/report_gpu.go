package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// printGPU prints a model's GPU cost and each method's estimated share; a
// simulated GPU says so on every line that shows its figures.
func printGPU(w io.Writer, m *repotv1.ModelStatus) {
	g := m.GPU
	if g == nil {
		return
	}
	sim := ""
	if g.Simulated {
		sim = " [SIMULATED GPU: not a measurement of any hardware]"
	}
	held := fmt.Sprint(m.GPUSecondsHeld)
	util := "-"
	if g.MeanUtilizationPermille != nil {
		util = permille(*g.MeanUtilizationPermille)
	}
	fmt.Fprintf(w, "  GPU%s: %s GPU-seconds held (%d seen by the telemetry), %d J over %ds measured, mean utilisation %s, peak memory %d MiB, %s J per solved problem, %s completion tokens per kJ\n",
		sim, held, g.GPUSecondsMeasured, g.EnergyJoules, g.MeasuredSeconds, util, g.PeakMemoryMiB, optInt(g.JoulesPerSolvedProblem), optInt(g.CompletionTokensPerKilojoule))
	for _, c := range g.Conditions {
		if c.Status != "True" {
			fmt.Fprintf(w, "  %s %s: %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  METHOD\tEST. ENERGY J\tEST. J/SOLVED%s\n", sim)
	for _, r := range m.Methods {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.Method, optInt(r.EstimatedEnergyJoules), optInt(r.EstimatedJoulesPerSolvedProblem))
	}
	tw.Flush()
}

func optInt(p *int64) string {
	if p == nil {
		return "-"
	}
	return fmt.Sprint(*p)
}
