package runner

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"repot.dev/repot-operator/runner/summary"
)

// WriteTable prints the summary as a table per model: method, success with
// its interval, calls per problem, tokens per problem, cost vs pot, routes
// (solved/count), then the paired comparisons.
func WriteTable(w io.Writer, s summary.Summary) error {
	for i, m := range s.Models {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "model %s: %d problems\n", m.Model, m.Problems)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "METHOD\tSUCCESS\t95% INTERVAL\tCALLS/PROBLEM\tTOKENS/PROBLEM (IN/OUT)\tCOST VS POT\tINFRA\tROUTES (SOLVED/COUNT)")
		for _, ms := range m.Methods {
			var routes []string
			for _, r := range ms.Routes {
				routes = append(routes, fmt.Sprintf("%s %d/%d", r.Route, r.Solved, r.Count))
			}
			cost := ms.CostVsPot
			if cost == "" {
				cost = "n/a"
			}
			fmt.Fprintf(tw, "%s\t%s (%d/%d)\t%s\t%s\t%d/%d\t%s\t%d err, %d retries\t%s\n",
				ms.Method, ms.Percent, ms.Solved, ms.Total, ms.Interval, ms.CallsPerProblem,
				ms.TokensPerProblem.Prompt, ms.TokensPerProblem.Completion, cost,
				ms.InfraErrors, ms.InfraRetries, strings.Join(routes, ", "))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(m.Comparisons) > 0 {
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "COMPARISON\tPROBLEMS\tDIFF (POINTS)\tONLY METHOD/ONLY BASELINE\tMCNEMAR P")
			for _, c := range m.Comparisons {
				fmt.Fprintf(tw, "%s vs %s\t%d\t%s\t%d/%d\t%s\n", c.Method, c.Baseline, c.Problems, c.DiffPoints, c.MethodOnly, c.BaselineOnly, c.PValue)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	if len(s.Derail) > 0 {
		if len(s.Models) > 0 {
			fmt.Fprintln(w)
		}
		return WriteDerailTable(w, s.Derail)
	}
	return nil
}
