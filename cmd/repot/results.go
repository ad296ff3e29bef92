package repot

import (
	"fmt"

	"github.com/spf13/cobra"
	"repot.dev/repot-operator/cmd/repot/results"
)

func init() { register(newResultsCommand) }

func newResultsCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "results",
		Short: "Take an evaluation's or a schedule's results out of the cluster",
	}
	c.AddCommand(newResultsExportCommand())
	return c
}

type exportOptions struct {
	cluster    clusterFlags
	store      storeFlags
	evaluation string
	schedule   string
	out        string
	// format is records (the ledger, from the cluster) or chaintree (the
	// Pyligent chain-tree examples of local trace files).
	format string
	// traces and backtrackTrace are --format chaintree's.
	traces         []string
	backtrackTrace bool
}

func newResultsExportCommand() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export (--evaluation NAME | --schedule NAME) --out DIR | --format traces --evaluation NAME [--out FILE] | --format chaintree (--evaluation NAME | --traces PATH...) [--out FILE]",
		Short: "Write an evaluation's records (or a schedule's runs and history) as records.jsonl and summary.json, its stored traces, or traces as chain-tree examples",
		Long: `Write the records of a RepotEvaluation's ledger ConfigMaps as DIR/records.jsonl and
their aggregate as DIR/summary.json: the files repot run writes, so a cluster
evaluation and a local run compare with the same tools (repot report, jq, diff).
The records are the ones the operator counts (the evaluation's models and
methods, each run once), so summary.json holds the numbers of the status.
DIR/source.json says how each model was served.

With --schedule, each of the schedule's runs that still exists is written to
DIR/<evaluation>/ and the schedule's history to DIR/schedule.json.

With --format traces, the traces of --evaluation are read from its S3
artifact store (status.artifacts names it; credentials from AWS_ACCESS_KEY_ID
and AWS_SECRET_ACCESS_KEY, else the ambient identity), each object checked
against its manifest's size and sha256, and written as one JSONL file to
--out FILE (default standard output).

With --format chaintree, the traces of --evaluation (from its store, as
above) or of --traces (a repot run output directory, a traces JSONL file, or
a directory of them such as a copy of the spec.artifacts PVC) become Pyligent
chain-tree training examples, one JSON line each, written to --out FILE
(default standard output); the counts by kind go to standard error.
docs/chaintree.md describes the examples. An evaluation without a store says
so; a PVC's traces are not served by the API: copy them out first (kubectl
cp from a pod that mounts it).`,
		Example: `  repot results export --evaluation demo -n default --out demo-results/
  repot report demo-results/ -o demo.html
  repot results export --format chaintree --evaluation demo -n default --out chaintree.jsonl
  repot results export --format traces --evaluation demo -n default --out traces.jsonl
  repot results export --format chaintree --traces repot-out/ --out chaintree.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch o.format {
			case formatChaintree:
				return o.exportChaintree(cmd)
			case formatTraces:
				return o.exportTraces(cmd)
			case formatRecords:
				if len(o.traces) > 0 {
					return fmt.Errorf("--traces applies to --format %s only", formatChaintree)
				}
			default:
				return fmt.Errorf("unknown --format %q: %s, %s or %s", o.format, formatRecords, formatTraces, formatChaintree)
			}
			if (o.evaluation == "") == (o.schedule == "") {
				return fmt.Errorf("give exactly one of --evaluation NAME and --schedule NAME")
			}
			if o.out == "" {
				return fmt.Errorf("--out DIR is required")
			}
			c, ns, err := o.cluster.client()
			if err != nil {
				return err
			}
			if o.evaluation != "" {
				res, err := results.ReadEvaluationResults(cmd.Context(), c, ns, o.evaluation)
				if err != nil {
					return err
				}
				if err := results.ExportEvaluation(o.out, res); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "exported %d records of %s/%s to %s\n", len(res.Records), ns, o.evaluation, o.out)
				return nil
			}
			sched, runs, err := results.ReadSchedule(cmd.Context(), c, ns, o.schedule)
			if err != nil {
				return err
			}
			if err := results.ExportSchedule(o.out, sched, runs); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "exported the history (%d points) and %d runs of %s/%s to %s\n", len(sched.Points), len(runs), ns, o.schedule, o.out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster.kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG or ~/.kube/config)")
	f.StringVarP(&o.cluster.namespace, "namespace", "n", "", "namespace (default: the kubeconfig's)")
	f.StringVar(&o.evaluation, "evaluation", "", "RepotEvaluation to export")
	f.StringVar(&o.schedule, "schedule", "", "RepotSchedule to export")
	f.StringVarP(&o.out, "out", "o", "", "output directory (--format chaintree: output file, default standard output)")
	f.StringVar(&o.format, "format", formatRecords, "what to write: "+formatRecords+" (records.jsonl and summary.json of --evaluation or --schedule), "+formatTraces+" (the stored traces of --evaluation) or "+formatChaintree+" (chain-tree examples of --evaluation's stored traces or of --traces)")
	f.StringSliceVar(&o.traces, "traces", nil, "--format chaintree: traces to export: JSONL files or directories (a repot run --out directory, or every *.jsonl of a directory without traces.jsonl)")
	o.store.register(f)
	f.BoolVar(&o.backtrackTrace, "backtrack-trace", true, "--format chaintree: add the abandoned branch's summary to backtrack examples")
	return cmd
}
