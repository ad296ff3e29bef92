package repot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/cmd/repot/results"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/judge"
)

func init() { register(newJudgeCommand) }

type judgeOptions struct {
	cluster    clusterFlags
	store      storeFlags
	evaluation string
	problems   string
}

func newJudgeCommand() *cobra.Command {
	var o judgeOptions
	cmd := &cobra.Command{
		Use:   "judge --evaluation NAME",
		Short: "Re-judge an evaluation's stored traces with the exact verifier and compare with its traces, ledger and status",
		Long: `Re-judge every stored trace of a RepotEvaluation from its recorded model output
(the completions, and the programs' recorded stdout) with the exact verifier,
and compare the verdict with the trace's own success, the ledger record of the
same model, problem and method, and the status's solved count of each model and
method. Runs ended by an infrastructure error are left out, as the status
leaves them out.

The traces are read from the evaluation's S3 artifact store as repot results
export --format traces reads them. The problems are the evaluation's: the
generated suite, or spec.problems (its ConfigMap key, or its URL), which
--problems FILE replaces.

Re-judged: pot, pot-retry, repot, repot-no-prefix, repot-restart,
repot-adaptive, cot, self-consistency; on derail-550 the prompted conditions
and repot-full, repot-no-prefix, repot-restart. Not re-judged, with the reason
printed: vex and the vex-* conditions, stateguard-rollback, repot-vrr, and the
repot variants under a noisy verifier (docs/artifacts.md).

Prints a table per model and method, then every disagreement, and exits 1 when
there is any (or a stored line that is not a trace).`,
		Example: `  repot judge --evaluation demo -n default
  repot judge --evaluation demo -n default --store-endpoint localhost:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster.kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG or ~/.kube/config)")
	f.StringVarP(&o.cluster.namespace, "namespace", "n", "", "namespace (default: the kubeconfig's)")
	f.StringVar(&o.evaluation, "evaluation", "", "RepotEvaluation to judge")
	f.StringVar(&o.problems, "problems", "", "the evaluation's problem data as a local file, instead of spec.problems")
	o.store.register(f)
	return cmd
}

func (o *judgeOptions) run(cmd *cobra.Command) error {
	if o.evaluation == "" {
		return errors.New("--evaluation NAME is required")
	}
	ctx := cmd.Context()
	c, ns, err := o.cluster.client()
	if err != nil {
		return err
	}
	res, err := results.ReadEvaluationResults(ctx, c, ns, o.evaluation)
	if err != nil {
		return err
	}
	st, err := o.store.open(ctx, cmd.ErrOrStderr(), c, ns, o.evaluation)
	if err != nil {
		return err
	}
	e := st.Evaluation
	data, err := o.problemData(ctx, c, e)
	if err != nil {
		return err
	}
	var problems io.Reader
	if data != nil {
		problems = bytes.NewReader(data)
	}
	noisy := e.Spec.VRR != nil && e.Spec.VRR.VerifierNoise != nil
	j, err := judge.New(string(e.Spec.Suite), problems, judge.Options{NoisyVerifier: noisy})
	if err != nil {
		return fmt.Errorf("the problems of %s/%s: %w", ns, o.evaluation, err)
	}
	var verdicts []contract.TraceVerdict
	n := 0
	if err := st.Each(ctx, func(line []byte) error {
		// Positions count every line; a blank one is no trace (JSONL).
		if n++; len(bytes.TrimSpace(line)) > 0 {
			verdicts = append(verdicts, j.Line(n, line))
		}
		return nil
	}); err != nil {
		return err
	}
	rep := results.CompareJudged(e, res.Records, verdicts)
	if err := writeJudgeReport(cmd.OutOrStdout(), rep, n); err != nil {
		return err
	}
	if rep.Found() {
		return fmt.Errorf("%s/%s: %d disagreements, %d lines that are not traces", ns, o.evaluation, len(rep.Disagreements), len(rep.Malformed))
	}
	return nil
}

// problemData is the evaluation's problem data: --problems, else
// spec.problems (its ConfigMap key, or its URL); nil for a generated suite.
func (o *judgeOptions) problemData(ctx context.Context, c client.Reader, e *repotv1.RepotEvaluation) ([]byte, error) {
	if o.problems != "" {
		return os.ReadFile(o.problems)
	}
	src := e.Spec.Problems
	switch {
	case src == nil:
		return nil, nil
	case src.ConfigMap != nil:
		cm := &corev1.ConfigMap{}
		if err := c.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: src.ConfigMap.Name}, cm); err != nil {
			return nil, fmt.Errorf("spec.problems: %w", err)
		}
		key := src.ConfigMap.KeyOrDefault()
		v, ok := cm.Data[key]
		if !ok {
			return nil, fmt.Errorf("spec.problems: ConfigMap %s has no key %s", src.ConfigMap.Name, key)
		}
		return []byte(v), nil
	case src.URL != "":
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.URL, nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("spec.problems.url (give a copy with --problems FILE): %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("spec.problems.url: GET %s: %s (give a copy with --problems FILE)", src.URL, resp.Status)
		}
		return io.ReadAll(resp.Body)
	}
	return nil, nil
}

// writeJudgeReport prints the table, the disagreements, the lines that
// are not traces and what was not re-judged.
func writeJudgeReport(w io.Writer, rep results.JudgeReport, lines int) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tMETHOD\tRUNS\tSTATUS SOLVED\tLEDGER SOLVED\tTRACES SOLVED\tJUDGE SOLVED\tNOT JUDGED\tDISAGREEMENTS")
	for _, r := range rep.Rows {
		status := "-"
		if r.StatusSolved >= 0 {
			status = strconv.Itoa(r.StatusSolved)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%d\n", r.Model, r.Method, r.Runs, status, r.LedgerSolved, r.TracesSolved, r.JudgeSolved, r.NotJudged, r.Disagreements)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d lines read; %d traces of runs ended by an infrastructure error and %d of runs whose record the status leaves out (left out); %d more traces of a run traced more than once (the one that agrees with its record counts, else the first)\n",
		lines, rep.InfraErrors, rep.LeftOut, rep.DuplicateTraces)
	for _, c := range rep.NotJudged {
		fmt.Fprintf(w, "not re-judged (%d runs): %s\n", c.Runs, c.Reason)
	}
	if len(rep.Malformed) > 0 {
		fmt.Fprintf(w, "\nlines that are not traces (%d):\n", len(rep.Malformed))
		for _, m := range rep.Malformed {
			fmt.Fprintf(w, "  %s\n", m)
		}
	}
	if len(rep.Disagreements) == 0 {
		_, err := fmt.Fprintln(w, "\nno disagreements")
		return err
	}
	fmt.Fprintf(w, "\ndisagreements (%d):\n", len(rep.Disagreements))
	for _, d := range rep.Disagreements {
		problem := d.ProblemID
		if problem == "" {
			problem = "(status)"
		}
		fmt.Fprintf(w, "  %s %s %s: %s\n", d.Model, d.Method, problem, strings.ReplaceAll(d.What, "\n", " "))
	}
	return nil
}
