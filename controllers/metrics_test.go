package controllers

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
)

func TestMetricsFollowTheStatus(t *testing.T) {
	m := newEvaluationMetrics()
	ev := revtesting.MakeEvaluation("metrics-ev", "ns").Simulated("a", "strong", 1).Obj()
	st := repotv1.RepotEvaluationStatus{Models: []repotv1.ModelStatus{{
		Name: "a", RunsDone: 7, RunsTotal: 480,
		Methods: []repotv1.MethodResult{
			{Method: "pot", PromptTokens: 100, CompletionTokens: 50, InfraErrors: 1},
			{Method: "repot", PromptTokens: 300, CompletionTokens: 70, ReasoningTokens: 9, InfraErrors: 2},
		},
	}}}
	for range 2 { // observing twice sets, never adds
		m.observe(ev, st)
	}
	l := prometheus.Labels{"namespace": "ns", "evaluation": "metrics-ev", "model": "a"}
	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{"runs done", testutil.ToFloat64(runsDoneGauge.With(l)), 7},
		{"runs total", testutil.ToFloat64(runsTotalGauge.With(l)), 480},
		{"infra errors", testutil.ToFloat64(infraErrorsGauge.With(l)), 3},
		{"prompt tokens", testutil.ToFloat64(tokensGauge.With(prometheus.Labels{"namespace": "ns", "evaluation": "metrics-ev", "model": "a", "kind": "prompt"})), 400},
		{"reasoning tokens", testutil.ToFloat64(tokensGauge.With(prometheus.Labels{"namespace": "ns", "evaluation": "metrics-ev", "model": "a", "kind": "reasoning"})), 9},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	m.forget("ns", "metrics-ev")
	if n := testutil.CollectAndCount(runsDoneGauge); n != 0 {
		t.Errorf("%d runs-done series left after forget", n)
	}
}
