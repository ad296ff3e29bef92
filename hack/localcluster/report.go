package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

func init() { register(newReportCommand) }

// revalGVR is the RepotEvaluation resource.
var revalGVR = schema.GroupVersionResource{Group: "repot.dev", Version: "v1alpha1", Resource: "repotevaluations"}

func newReportCommand() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "report [NAME]",
		Short: "Print the status tables of RepotEvaluations (per model and method: solved, rate, interval, calls, tokens, cost vs pot, routes)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dyn, err := cf.dynamic()
			if err != nil {
				return err
			}
			evals, err := listEvaluations(cmd.Context(), dyn, cf.namespace)
			if err != nil {
				return err
			}
			for _, e := range evals {
				if len(args) == 1 && e.Name != args[0] {
					continue
				}
				printReport(cmd.OutOrStdout(), e)
			}
			return nil
		},
	}
	cf.add(cmd)
	return cmd
}

func listEvaluations(ctx context.Context, dyn dynamic.Interface, ns string) ([]*repotv1.RepotEvaluation, error) {
	list, err := dyn.Resource(revalGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	var out []*repotv1.RepotEvaluation
	for i := range list.Items {
		e := &repotv1.RepotEvaluation{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(list.Items[i].Object, e); err != nil {
			return nil, fmt.Errorf("%s: %w", list.Items[i].GetName(), err)
		}
		out = append(out, e)
	}
	return out, nil
}

// printReport prints an evaluation's status as tables.
func printReport(w io.Writer, e *repotv1.RepotEvaluation) {
	st := e.Status
	fmt.Fprintf(w, "\n== RepotEvaluation %s/%s", e.Namespace, e.Name)
	if st.Summary != nil && st.Summary.State != "" {
		fmt.Fprintf(w, ": %s", st.Summary.State)
	}
	if st.Progress != nil {
		fmt.Fprintf(w, ", %d/%d runs", st.Progress.RunsDone, st.Progress.RunsTotal)
	}
	fmt.Fprintln(w)
	for _, c := range st.Conditions {
		if c.Status == metav1.ConditionTrue && (c.Type == repotv1.ConditionFailed || c.Type == repotv1.ConditionStalled) {
			fmt.Fprintf(w, "   %s: %s: %s\n", c.Type, c.Reason, c.Message)
		}
	}
	for _, m := range st.Models {
		fmt.Fprintf(w, "\nmodel %s: server %s", m.Name, m.Server.State)
		if m.Server.Endpoint != "" {
			fmt.Fprintf(w, " (%s)", m.Server.Endpoint)
		}
		fmt.Fprintf(w, ", runs %d/%d", m.RunsDone, m.RunsTotal)
		if m.FailedPrefixPermille != nil {
			fmt.Fprintf(w, ", failed first plans valid for %s of their length", permille(*m.FailedPrefixPermille))
		}
		if m.RepotMinusPotRetryPoints != "" {
			fmt.Fprintf(w, ", repot - pot-retry: %s points", m.RepotMinusPotRetryPoints)
		}
		fmt.Fprintln(w)
		if m.Server.Reason != "" {
			fmt.Fprintf(w, "   server %s: %s\n", m.Server.Reason, m.Server.Message)
		}
		printDerail(w, e, m.Derail)
		if len(m.Methods) == 0 {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "METHOD\tSOLVED\tRATE\t95% CI\tCALLS/PROBLEM\tPROMPT TOK\tCOMPLETION TOK\tCACHED\tREASONING\tCOST VS POT\tINFRA ERR/RETRIES")
		for _, r := range m.Methods {
			fmt.Fprintf(tw, "%s\t%d/%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%d/%d\n", r.Method, r.Solved, r.Total, r.Rate, r.Interval,
				r.CallsPerProblem, r.PromptTokens, r.CompletionTokens, r.CachedTokens, r.ReasoningTokens, dash(r.CostVsPot), r.InfraErrors, r.InfraRetries)
		}
		tw.Flush()
		for _, r := range m.Methods {
			if len(r.Routes) == 0 {
				continue
			}
			var parts []string
			for _, rc := range r.Routes {
				parts = append(parts, fmt.Sprintf("%s %d (%d solved)", rc.Name, rc.Count, rc.Solved))
			}
			fmt.Fprintf(w, "  routes of %s: %s\n", r.Method, strings.Join(parts, ", "))
		}
		printGPU(w, &m)
		printProvenance(w, &m)
	}
	if sc := st.Scaling; sc != nil && len(sc.Cells) > 0 {
		fmt.Fprintf(w, "\ncapability scaling (failed-prefix fraction vs repot - pot-retry), slope %s:\n", dash(sc.Slope))
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "MODEL\tENVIRONMENT\tFAILED PREFIX\tREPOT - POT-RETRY (POINTS)")
		for _, c := range sc.Cells {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Model, c.Environment, permille(c.FailedPrefixPermille), c.RepotMinusPotRetryPoints)
		}
		tw.Flush()
	}
}

func permille(p int32) string { return fmt.Sprintf("%d.%d%%", p/10, p%10) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// evaluationDone reports whether an evaluation has finished (Complete or
// Failed) and its state word.
func evaluationDone(e *repotv1.RepotEvaluation) (bool, string) {
	state := ""
	if e.Status.Summary != nil {
		state = string(e.Status.Summary.State)
	}
	if meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete) {
		return true, "Complete"
	}
	if meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionFailed) {
		return true, "Failed"
	}
	return false, state
}
