package cli

import (
	"context"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/controllers/results"
)

// ReportSources reads what repot report's --evaluation and --schedule name
// from the cluster of kubeconfig (runner/cli.ClusterSources): each
// evaluation's results as one source, in order, then the schedule's history
// and its runs.
func ReportSources(ctx context.Context, kubeconfig, namespace string, evaluations []string, schedule string) (*report.Schedule, []report.Source, error) {
	cf := clusterFlags{kubeconfig: kubeconfig, namespace: namespace}
	c, ns, err := cf.client()
	if err != nil {
		return nil, nil, err
	}
	var srcs []report.Source
	for _, name := range evaluations {
		res, err := results.ReadEvaluationResults(ctx, c, ns, name)
		if err != nil {
			return nil, nil, err
		}
		srcs = append(srcs, res.Source(report.OriginEvaluation))
	}
	if schedule == "" {
		return nil, srcs, nil
	}
	sched, more, err := results.ReadScheduleReport(ctx, c, ns, schedule)
	if err != nil {
		return nil, nil, err
	}
	return sched, append(srcs, more...), nil
}
