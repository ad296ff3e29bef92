package planning

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

func TestProblemsChanged(t *testing.T) {
	cmRef := &repotv1.ProblemSource{ConfigMap: &repotv1.ConfigMapKey{Name: "p", Key: "problems.jsonl"}}
	a := ProblemsFromConfigMap(cmRef.ConfigMap, &corev1.ConfigMap{Data: map[string]string{"problems.jsonl": "{\"id\":1}\n"}})
	b := ProblemsFromConfigMap(cmRef.ConfigMap, &corev1.ConfigMap{Data: map[string]string{"problems.jsonl": "{\"id\":1}\n{\"id\":2}\n"}})
	if a.Hash == b.Hash || !strings.HasPrefix(a.Hash, "sha256:") {
		t.Fatalf("hashes %q and %q", a.Hash, b.Hash)
	}
	now := metav1.NewTime(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	cases := []struct {
		name      string
		recorded  string
		problems  *repotv1.ProblemSource
		current   problemsInfo
		wantEnded bool
	}{
		{"not started: nothing recorded", "", cmRef, b, false},
		{"unchanged", a.Hash, cmRef, a, false},
		{"changed", a.Hash, cmRef, b, true},
		{"unreadable now: stalls elsewhere, not failed here", a.Hash, cmRef, problemsInfo{Unavailable: "gone"}, false},
		{"a URL has no hash", "", &repotv1.ProblemSource{URL: "https://x/p.jsonl"}, problemsInfo{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := &repotv1.RepotEvaluation{Spec: repotv1.RepotEvaluationSpec{Problems: tc.problems}}
			e.Status.ProblemsHash = tc.recorded
			o, ended := problemsChanged(e, &World{Problems: tc.current}, now)
			if ended != tc.wantEnded {
				t.Fatalf("ended = %v, want %v", ended, tc.wantEnded)
			}
			if ended && (o.Phase != phaseFailed || o.Reason != repotv1.ReasonProblemsChanged || !strings.Contains(o.Message, "create a new RepotEvaluation")) {
				t.Errorf("outcome %+v", o)
			}
		})
	}
	// The hash is recorded at the start and kept afterwards.
	e := &repotv1.RepotEvaluation{}
	if got := startedProblemsHash(e, nil, a); got != "" {
		t.Errorf("before the start: %q", got)
	}
	if got := startedProblemsHash(e, &now, a); got != a.Hash {
		t.Errorf("at the start: %q", got)
	}
	e.Status.ProblemsHash = a.Hash
	if got := startedProblemsHash(e, &now, b); got != a.Hash {
		t.Errorf("after the start: %q, want the recorded %q", got, a.Hash)
	}
}
