package repot

import (
	"context"

	"repot.dev/repot-operator/analysis/report"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/cmd/repot/results"
)

// reportSources reads what repot report's --evaluation and --schedule name
// from the cluster of kubeconfig (clusterSources): each
// evaluation's results as one source, in order, with where its traces are
// (its artifact store, reached at storeEndpoint when set, with the caller's
// credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else the ambient
// identity), then the schedule's history and its runs.
func reportSources(ctx context.Context, kubeconfig, namespace string, evaluations []string, schedule, storeEndpoint string) (*report.Schedule, []report.Source, error) {
	cf := clusterFlags{kubeconfig: kubeconfig, namespace: namespace}
	c, ns, err := cf.client()
	if err != nil {
		return nil, nil, err
	}
	creds, credsErr := artifacts.CredentialsFromEnv()
	var srcs []report.Source
	for _, name := range evaluations {
		res, err := results.ReadEvaluationResults(ctx, c, ns, name)
		if err != nil {
			return nil, nil, err
		}
		s := res.Source(report.OriginEvaluation)
		if credsErr != nil && res.Evaluation.Status.Artifacts != nil {
			s.Traces = report.Traces{Problem: "the store's credentials: " + credsErr.Error()}
		} else {
			s.Traces = results.ReportTraces(ctx, c, res.Evaluation, creds, storeEndpoint)
		}
		srcs = append(srcs, s)
	}
	if schedule == "" {
		return nil, srcs, nil
	}
	sched, more, err := results.ReadScheduleReport(ctx, c, ns, schedule)
	if err != nil {
		return nil, nil, err
	}
	for i := range more {
		more[i].Traces = report.Traces{Missing: "The traces of a schedule's runs are not read: report the run with --evaluation NAME to link its failed runs to their traces."}
	}
	return sched, append(srcs, more...), nil
}
