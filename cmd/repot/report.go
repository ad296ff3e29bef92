package repot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/analysis/report"
)

func init() { register(newReportCommand) }

// clusterSources reads the sources that repot report's --evaluation and
// --schedule name from the cluster of kubeconfig (namespace "" is the
// kubeconfig's): the evaluations' results in order, then the schedule's runs,
// and the schedule's history (nil without a schedule). Each evaluation's
// source says where its traces are (report.Source.Traces): storeEndpoint,
// when set, replaces the endpoint of the artifact store its status names
// (--store-endpoint). The command reads the cluster with reportSources;
// its tests pass their own.
type clusterSources func(ctx context.Context, kubeconfig, namespace string, evaluations []string, schedule, storeEndpoint string) (*report.Schedule, []report.Source, error)

// reportOptions are the flags of repot report.
type reportOptions struct {
	cluster     clusterFlags
	evaluations []string
	schedule    string
	out         string
	title       string
	simulated   []string
	combine     bool
	// storeEndpoint is the artifact store as reached from here.
	storeEndpoint string
	// sources reads --evaluation and --schedule from the cluster.
	sources clusterSources
}

func newReportCommand() *cobra.Command { return reportCommand(reportSources) }

// reportCommand is repot report reading the cluster with sources.
func reportCommand(sources clusterSources) *cobra.Command {
	o := reportOptions{sources: sources}
	cmd := &cobra.Command{
		Use:   "report [DIR...]",
		Short: "Write one self-contained HTML report of run directories, exported records, evaluations or a schedule",
		Long: `Write one HTML file with charts (SVG, drawn by gonum.org/v1/plot) and the table of
numbers behind each: success rates with 95% intervals, routing distributions with
rescue rates, cost against accuracy, capability scaling, success per environment
and complexity, a schedule's solve rate over time, and GPU energy per solved
problem where the status has it. The page loads nothing from the network.

Each DIR is a repot run output directory, a directory of such directories (one
source each), or a directory written by repot results export. --evaluation and
--schedule read from the cluster of the kubeconfig.

Below each source's results, a folded section lists its failed runs (finished,
unsuccessful, not ended by an infrastructure error) per model and method, each
problem linked to a page of its trace: the outcome, stop reason and tokens, and
each call's prompt, completion, program, output, plan and replay verdict. The
pages are written beside the report, in a directory named after it
(demo.html: demo-traces/SOURCE/MODEL/METHOD/PROBLEM.html), replacing those of
an earlier report there. A run directory's traces are its traces.jsonl; an
evaluation's are read from its S3 artifact store (status.artifacts names it;
credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else the ambient
identity; --store-endpoint reaches it from outside the cluster). Without
traces, or when reading them fails, the section says why and the report is
still written.`,
		Example: `  repot report out/ --simulated sim-strong -o report.html
  repot report --evaluation demo -n default -o demo.html
  repot report --evaluation demo --store-endpoint localhost:9000 -o demo.html
  repot report runs/ exported/ --evaluation demo`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && len(o.evaluations) == 0 && o.schedule == "" {
				return fmt.Errorf("nothing to report: give run directories, --evaluation NAME or --schedule NAME")
			}
			r, err := buildReport(cmd, o, args)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
				return err
			}
			linked, err := report.WriteTracePages(cmd.Context(), o.out, &r, cmd.ErrOrStderr())
			if err != nil {
				return fmt.Errorf("writing the trace pages: %w", err)
			}
			if err := writeReport(o.out, r); err != nil {
				return err
			}
			abs, _ := filepath.Abs(o.out)
			fmt.Fprintf(cmd.OutOrStdout(), "report written to %s\n", abs)
			failed := 0
			for _, s := range r.Sources {
				if s.Failures != nil {
					failed += len(s.Failures.Runs)
				}
			}
			where := ""
			if linked > 0 {
				d, _ := filepath.Abs(report.TraceDir(o.out))
				where = " (trace pages in " + d + ")"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d of %d failed runs linked to their traces%s\n", linked, failed, where)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster.kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG or ~/.kube/config)")
	f.StringVarP(&o.cluster.namespace, "namespace", "n", "", "namespace of --evaluation and --schedule (default: the kubeconfig's)")
	f.StringSliceVar(&o.evaluations, "evaluation", nil, "RepotEvaluation to read from the cluster (repeatable)")
	f.StringVar(&o.schedule, "schedule", "", "schedule whose history to read from the cluster")
	f.StringVarP(&o.out, "out", "o", "report.html", "HTML file to write")
	f.StringVar(&o.title, "title", "", "page title (default: RePoT evaluation report)")
	f.StringSliceVar(&o.simulated, "simulated", nil, "models of run directories that a simulated server answered (repeatable)")
	f.StringVar(&o.storeEndpoint, "store-endpoint", "", "the artifact store's host:port as reached from here, for the traces of --evaluation, instead of the in-cluster endpoint status.artifacts names (e.g. localhost:9000 through kubectl port-forward); the bucket, keys and TLS setting stay the status's")
	f.BoolVar(&o.combine, "combine", false, "also show the records of all directories as one source (models side by side, one capability-scaling sweep)")
	return cmd
}

func buildReport(cmd *cobra.Command, o reportOptions, dirs []string) (report.Report, error) {
	r := report.Report{Title: o.title, Generated: time.Now()}
	sim := map[string]bool{}
	for _, m := range o.simulated {
		sim[m] = true
	}
	for _, d := range dirs {
		srcs, sched, err := report.LoadDir(d, sim)
		if err != nil {
			return r, err
		}
		if sched != nil {
			if r.Schedule != nil {
				return r, fmt.Errorf("%s: a report shows one schedule; %s is already one", d, r.Schedule.Name)
			}
			r.Schedule = sched
		}
		r.Sources = append(r.Sources, srcs...)
	}
	if o.combine && len(r.Sources) > 1 {
		r.Sources = append([]report.Source{report.Combine("all directories combined", r.Sources)}, r.Sources...)
	}
	if len(o.evaluations) == 0 && o.schedule == "" {
		return r, nil
	}
	sched, srcs, err := o.sources(cmd.Context(), o.cluster.kubeconfig, o.cluster.namespace, o.evaluations, o.schedule, o.storeEndpoint)
	if err != nil {
		return r, err
	}
	if sched != nil {
		r.Schedule = sched
	}
	r.Sources = append(r.Sources, srcs...)
	return r, nil
}

// writeReport renders r into path atomically.
func writeReport(path string, r report.Report) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".report-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := report.Render(f, r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
