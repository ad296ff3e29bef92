package controllers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// Gauges beside controller-runtime's reconcile counts and durations. They
// are set from the recomputed status, so they too are never incremented.
var (
	runsDoneGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "repot_evaluation_runs_done",
		Help: "Distinct runs (model, problem, method) recorded in the ledgers of an evaluation's model.",
	}, []string{"namespace", "evaluation", "model"})
	runsTotalGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "repot_evaluation_runs_total",
		Help: "Runs an evaluation's model has to do (0 when the problem count is unknown).",
	}, []string{"namespace", "evaluation", "model"})
	tokensGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "repot_evaluation_tokens",
		Help: "Tokens recorded for an evaluation's model, by kind (prompt, completion, cached, reasoning).",
	}, []string{"namespace", "evaluation", "model", "kind"})
	infraErrorsGauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "repot_evaluation_infra_errors",
		Help: "Runs of an evaluation's model that an infrastructure error ended.",
	}, []string{"namespace", "evaluation", "model"})
	registerOnce sync.Once
)

// evaluationMetrics publishes an evaluation's figures as gauges.
type evaluationMetrics struct{}

func newEvaluationMetrics() *evaluationMetrics {
	registerOnce.Do(func() {
		metrics.Registry.MustRegister(runsDoneGauge, runsTotalGauge, tokensGauge, infraErrorsGauge)
	})
	return &evaluationMetrics{}
}

func (*evaluationMetrics) observe(e *repotv1.RepotEvaluation, st repotv1.RepotEvaluationStatus) {
	for _, m := range st.Models {
		l := prometheus.Labels{"namespace": e.Namespace, "evaluation": e.Name, "model": m.Name}
		runsDoneGauge.With(l).Set(float64(m.RunsDone))
		runsTotalGauge.With(l).Set(float64(m.RunsTotal))
		var prompt, completion, cached, reasoning, infra int64
		for _, r := range m.Methods {
			prompt += r.PromptTokens
			completion += r.CompletionTokens
			cached += r.CachedTokens
			reasoning += r.ReasoningTokens
			infra += int64(r.InfraErrors)
		}
		infraErrorsGauge.With(l).Set(float64(infra))
		for kind, v := range map[string]int64{"prompt": prompt, "completion": completion, "cached": cached, "reasoning": reasoning} {
			tokensGauge.With(prometheus.Labels{"namespace": e.Namespace, "evaluation": e.Name, "model": m.Name, "kind": kind}).Set(float64(v))
		}
	}
}

// forget removes a deleted evaluation's series.
func (*evaluationMetrics) forget(namespace, name string) {
	l := prometheus.Labels{"namespace": namespace, "evaluation": name}
	for _, g := range []*prometheus.GaugeVec{runsDoneGauge, runsTotalGauge, tokensGauge, infraErrorsGauge} {
		g.DeletePartialMatch(l)
	}
}

// MetricsServerOptions is how the manager serves its metrics: with secure,
// over HTTPS with controller-runtime's self-signed certificate, and only to
// a caller whose bearer token the API server authenticates and who may GET
// the non-resource URL /metrics (the metrics-reader ClusterRole the
// installs ship), as Kueue and JobSet serve theirs. The manager then needs
// to create TokenReviews and SubjectAccessReviews (the metrics-auth
// ClusterRole).
func MetricsServerOptions(addr string, secure bool) metricsserver.Options {
	if !secure {
		return metricsserver.Options{BindAddress: addr}
	}
	return metricsserver.Options{BindAddress: addr, SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization}
}
