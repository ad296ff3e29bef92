package summary

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the summary as a table per model: method, success with
// its interval, calls per problem, tokens per problem, cost vs pot, routes
// (solved/count), then the paired comparisons.
func WriteTable(w io.Writer, s Summary) error {
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
		if err := writeRoundsTable(w, m); err != nil {
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

// writeRoundsTable prints the repair dynamics of the model's methods that
// recorded rounds (docs/vrr.md): per round the runs that entered it, those
// that left it solved, alpha and beta as hits/trials, the prefixes it
// shortened, its tokens, and the true validity and observed acceptance
// after it; then why the loops stopped.
func writeRoundsTable(w io.Writer, m ModelSummary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := false
	var stopLines []string
	for _, ms := range m.Methods {
		if len(ms.Rounds) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "REPAIR ROUNDS	ROUND	ENTERED	LEFT SOLVED	ALPHA (HITS/TRIALS)	BETA (HITS/TRIALS)	SHORTENED	TOKENS	VALID AFTER	ACCEPTED AFTER")
			header = true
		}
		for _, r := range ms.Rounds {
			alpha, beta := "-", "-"
			if r.K > 0 {
				alpha = fmt.Sprintf("%d/%d", r.AlphaHits, r.AlphaTrials)
				beta = fmt.Sprintf("%d/%d", r.BetaHits, r.BetaTrials)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d/%d\t%d/%d\n", ms.Method, r.K, r.Entered, r.LeftSolved, alpha, beta,
				r.Shortened, r.Tokens, r.ValidAt, r.Runs, r.AcceptedAt, r.Runs)
		}
		var stops []string
		for _, st := range ms.LoopStops {
			stops = append(stops, fmt.Sprintf("%s %d", st.Reason, st.Count))
		}
		stopLines = append(stopLines, fmt.Sprintf("%s loop stops: %s", ms.Method, strings.Join(stops, ", ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range stopLines {
		fmt.Fprintln(w, l)
	}
	return nil
}
