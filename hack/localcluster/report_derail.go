package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// printDerail prints a model's Derail-550 table: one line per condition
// with the recovery rate and interval, tokens per run, the comparison with
// error_only, and the splits by injection type and environment.
func printDerail(w io.Writer, e *repotv1.RepotEvaluation, rs []repotv1.DerailConditionResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintf(w, "Derail-550 (checkpoint statement %s):\n", e.Spec.CheckpointStatementOrDefault())
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "CONDITION\tRECOVERED\tRATE\t95% CI\tTOKENS/RUN IN/OUT\tVS ERROR_ONLY (MCNEMAR P)\tBY INJECTION TYPE\tBY ENVIRONMENT\tINFRA ERR")
	for _, r := range rs {
		vs := "-"
		if c := r.VsErrorOnly; c != nil {
			vs = fmt.Sprintf("%s (p %s)", c.DiffPoints, c.PValue)
		}
		fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%d/%d\t%s\t%s\t%s\t%d\n", r.Condition, r.Recovered, r.Total, dash(r.Rate), dash(r.Interval),
			r.PromptTokensPerRun, r.CompletionTokensPerRun, vs, splitsText(r.ByInjectionType), splitsText(r.ByEnvironment), r.InfraErrors)
	}
	tw.Flush()
	for _, r := range rs {
		if len(r.StopReasons) == 0 {
			continue
		}
		var parts []string
		for _, s := range r.StopReasons {
			parts = append(parts, fmt.Sprintf("%s %d", s.Reason, s.Count))
		}
		fmt.Fprintf(w, "  stop reasons of %s: %s\n", r.Condition, strings.Join(parts, ", "))
	}
}

func splitsText(ss []repotv1.RateSplit) string {
	if len(ss) == 0 {
		return "-"
	}
	parts := make([]string, 0, len(ss))
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s %s", s.Name, s.Rate))
	}
	return strings.Join(parts, ", ")
}
