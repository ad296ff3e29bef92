package summary

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteDerailTable prints the Derail-550 figures: per model and checkpoint
// statement, one line per condition (recovery with its interval, tokens per
// run, stop reasons, the split by injection type and by environment), then
// each condition against error_only.
func WriteDerailTable(w io.Writer, ds []DerailModelSummary) error {
	for i, d := range ds {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "Derail-550, model %s, checkpoint statement %s: %d cases\n", d.Model, d.CheckpointStatement, d.Cases)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "CONDITION\tRECOVERED\t95% INTERVAL\tTOKENS/RUN (IN/OUT)\tINFRA\tBY INJECTION TYPE\tBY ENVIRONMENT\tSTOP REASONS")
		for _, c := range d.Conditions {
			fmt.Fprintf(tw, "%s\t%s (%d/%d)\t%s\t%d/%d\t%d\t%s\t%s\t%s\n", c.Condition, c.Percent, c.Solved, c.Total, c.Interval,
				c.TokensPerRun.Prompt, c.TokensPerRun.Completion, c.InfraErrors, splitText(c.ByInjectionType), splitText(c.ByEnvironment), reasonText(c.StopReasons))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(d.VsErrorOnly) > 0 {
			tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "VS ERROR_ONLY\tCASES\tDIFF (POINTS)\tONLY CONDITION/ONLY ERROR_ONLY\tMCNEMAR P")
			for _, c := range d.VsErrorOnly {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%d/%d\t%s\n", c.Method, c.Problems, c.DiffPoints, c.MethodOnly, c.BaselineOnly, c.PValue)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func splitText(ss []Split) string {
	parts := make([]string, 0, len(ss))
	for _, s := range ss {
		parts = append(parts, fmt.Sprintf("%s %s", s.Name, s.Percent))
	}
	return strings.Join(parts, ", ")
}

func reasonText(rs []ReasonCount) string {
	parts := make([]string, 0, len(rs))
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s %d", r.Reason, r.Count))
	}
	return strings.Join(parts, ", ")
}
