package controllers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/runner"
	"repot.dev/repot-operator/runner/report"
	"repot.dev/repot-operator/runner/summary"
)

func init() { registerCommand(newResultsCommand) }

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
				res, err := ReadEvaluationResults(cmd.Context(), c, ns, o.evaluation)
				if err != nil {
					return err
				}
				if err := ExportEvaluation(o.out, res); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "exported %d records of %s/%s to %s\n", len(res.Records), ns, o.evaluation, o.out)
				return nil
			}
			sched, runs, err := readSchedule(cmd.Context(), c, ns, o.schedule)
			if err != nil {
				return err
			}
			if err := exportSchedule(o.out, sched, runs); err != nil {
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

// ExportEvaluation writes records.jsonl, summary.json and source.json into
// dir. It refuses a directory that already holds records, as repot run does.
func ExportEvaluation(dir string, res *EvaluationResults) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	recPath := filepath.Join(dir, runner.RecordsFile)
	if st, err := os.Stat(recPath); err == nil && st.Size() > 0 {
		return fmt.Errorf("%s already holds records: choose another --out", recPath)
	}
	var b bytes.Buffer
	for _, r := range res.Records {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := writeFileAtomic(recPath, b.Bytes()); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(dir, runner.SummaryFile), summary.Aggregate(res.Records)); err != nil {
		return err
	}
	return writeJSONFile(filepath.Join(dir, report.SourceFile), res.Meta(report.OriginExported))
}

// exportSchedule writes the history and one directory per run.
func exportSchedule(dir string, sched *report.Schedule, runs []*EvaluationResults) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range runs {
		if err := ExportEvaluation(filepath.Join(dir, r.Evaluation.Name), r); err != nil {
			return err
		}
	}
	return writeJSONFile(filepath.Join(dir, report.ScheduleFile), sched)
}

// writeJSONFile writes v indented and newline-terminated, as repot run
// writes summary.json.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func writeFileAtomic(path string, b []byte) error {
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
