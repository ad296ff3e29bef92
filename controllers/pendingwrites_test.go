package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/planning"
)

func deployment(name string) *appsv1.Deployment {
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
}

func deploymentNames(w *planning.World) []string {
	var out []string
	for _, d := range w.Deployments {
		out = append(out, d.Name)
	}
	return out
}

func TestPendingWritesOverlay(t *testing.T) {
	ev := types.NamespacedName{Namespace: "ns", Name: "ev"}
	tests := []struct {
		name string
		// cache is what the informer cache holds; created and deleted are
		// the writes made at t0.
		cache, created, deleted []string
		at                      time.Time
		want                    []string
		// wantAfter is the world of a second overlay on the same cache:
		// what the first one forgot stays forgotten.
		wantAfter []string
	}{
		{name: "a creation the cache lacks is added",
			created: []string{"a"}, at: t0.Add(time.Second), want: []string{"a"}, wantAfter: []string{"a"}},
		{name: "a creation the cache shows is forgotten",
			cache: []string{"a"}, created: []string{"a"}, at: t0.Add(time.Second), want: []string{"a"}, wantAfter: []string{"a"}},
		{name: "a deletion the cache still shows is removed",
			cache: []string{"a", "b"}, deleted: []string{"a"}, at: t0.Add(time.Second), want: []string{"b"}, wantAfter: []string{"b"}},
		{name: "the last write of a child wins: created, then deleted",
			cache: []string{"a"}, created: []string{"a"}, deleted: []string{"a"}, at: t0.Add(time.Second), want: nil, wantAfter: nil},
		{name: "past the TTL the cache is believed",
			cache: []string{"a"}, created: []string{"b"}, deleted: []string{"a"}, at: t0.Add(pendingTTL + time.Second),
			want: []string{"a"}, wantAfter: []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPendingWrites()
			for _, n := range tc.created {
				p.created(ev, deployment(n), t0)
			}
			for _, n := range tc.deleted {
				p.deleted(ev, deployment(n), t0)
			}
			for i, want := range [][]string{tc.want, tc.wantAfter} {
				w := &planning.World{Now: tc.at}
				for _, n := range tc.cache {
					w.Deployments = append(w.Deployments, *deployment(n))
				}
				p.overlay(ev, w)
				if diff := cmp.Diff(want, deploymentNames(w)); diff != "" {
					t.Errorf("overlay %d (-want +got):\n%s", i+1, diff)
				}
			}
			// Nothing leaks to another evaluation.
			other := &planning.World{Now: tc.at}
			p.overlay(types.NamespacedName{Namespace: "ns", Name: "other"}, other)
			if len(other.Deployments) != 0 {
				t.Errorf("another evaluation sees %v", deploymentNames(other))
			}
		})
	}
}

func TestPendingWritesOverlayKeepsKinds(t *testing.T) {
	ev := types.NamespacedName{Namespace: "ns", Name: "ev"}
	p := newPendingWrites()
	p.created(ev, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, t0)
	w := &planning.World{Now: t0, Deployments: []appsv1.Deployment{*deployment("a")}}
	p.overlay(ev, w)
	if len(w.Services) != 1 || len(w.Deployments) != 1 {
		t.Errorf("a Service named like a Deployment: got %d services, %d deployments, want 1 and 1", len(w.Services), len(w.Deployments))
	}
}

func TestPendingWritesStoredStatus(t *testing.T) {
	now := metav1.NewTime(t0)
	written := repotv1.RepotEvaluationStatus{ObservedGeneration: 1, StartTime: &now}
	cached := repotv1.RepotEvaluationStatus{ObservedGeneration: 1}
	eval := func(rv string) *repotv1.RepotEvaluation {
		return &repotv1.RepotEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ev", ResourceVersion: rv}, Status: cached}
	}
	tests := []struct {
		name  string
		write bool
		e     *repotv1.RepotEvaluation
		at    time.Time
		want  repotv1.RepotEvaluationStatus
	}{
		{name: "nothing written: the cache's", e: eval("5"), at: t0, want: cached},
		{name: "the cache has not seen the write: the write", write: true, e: eval("5"), at: t0.Add(time.Second), want: written},
		{name: "the cache moved past it for another change: still the write", write: true, e: eval("7"), at: t0.Add(time.Second), want: written},
		{name: "the cache shows the write: the cache's", write: true, e: eval("6"), at: t0.Add(time.Second), want: cached},
		{name: "past the TTL: the cache's", write: true, e: eval("5"), at: t0.Add(pendingTTL + time.Second), want: cached},
	}
	for _, tc := range tests {
		p := newPendingWrites()
		if tc.write {
			p.wroteStatus(planning.NamespacedName(tc.e), written, "6", t0)
		}
		if diff := cmp.Diff(tc.want, p.storedStatus(tc.e, tc.at)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	p := newPendingWrites()
	p.wroteStatus(planning.NamespacedName(eval("5")), written, "6", t0)
	p.forget(planning.NamespacedName(eval("5")))
	if diff := cmp.Diff(cached, p.storedStatus(eval("5"), t0)); diff != "" {
		t.Errorf("after forget (-want +got):\n%s", diff)
	}
}

// An evaluation re-created under the same name (another UID) starts with no
// pending writes: the children and status written for the earlier one are
// not overlaid on its world.
func TestPendingWritesForgetAnEarlierEvaluation(t *testing.T) {
	ev := types.NamespacedName{Namespace: "ns", Name: "ev"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := newPendingWrites()
	if p.observe(ev, "old") {
		t.Errorf("the first UID seen forgets writes")
	}
	p.created(ev, deployment("ev-m-server"), t0)
	p.wroteStatus(ev, repotv1.RepotEvaluationStatus{ObservedGeneration: 7}, "10", t0)
	if p.observe(ev, "old") {
		t.Errorf("the same UID again forgets writes")
	}
	if !p.observe(ev, "new") {
		t.Errorf("a new UID does not say it forgot the earlier evaluation's writes")
	}
	w := &planning.World{Now: t0.Add(time.Second)}
	p.overlay(ev, w)
	if got := deploymentNames(w); len(got) != 0 {
		t.Errorf("the earlier evaluation's child %v is overlaid", got)
	}
	e := &repotv1.RepotEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "ev", UID: "new", ResourceVersion: "11"}}
	if st := p.storedStatus(e, t0.Add(time.Second)); st.ObservedGeneration != 0 {
		t.Errorf("the earlier evaluation's status is taken as stored: %+v", st)
	}
}
