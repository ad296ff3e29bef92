package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"repot.dev/repot-operator/controllers/results"
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
	evaluation string
	schedule   string
	out        string
}

func newResultsExportCommand() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export (--evaluation NAME | --schedule NAME) --out DIR",
		Short: "Write an evaluation's records (or a schedule's runs and history) as records.jsonl and summary.json",
		Long: `Write the records of a RepotEvaluation's ledger ConfigMaps as DIR/records.jsonl and
their aggregate as DIR/summary.json: the files repot run writes, so a cluster
evaluation and a local run compare with the same tools (repot report, jq, diff).
The records are the ones the operator counts (the evaluation's models and
methods, each run once), so summary.json holds the numbers of the status.
DIR/source.json says how each model was served.

With --schedule, each of the schedule's runs that still exists is written to
DIR/<evaluation>/ and the schedule's history to DIR/schedule.json.`,
		Example: `  repot results export --evaluation demo -n default --out demo-results/
  repot report demo-results/ -o demo.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
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
	f.StringVarP(&o.out, "out", "o", "", "output directory")
	return cmd
}
