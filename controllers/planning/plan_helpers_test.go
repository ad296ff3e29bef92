package planning

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// t0 is the fixed "now" of the planning tests.
var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// planDigest is the part of a plan a table compares: which children are
// created, updated (with the changed field) and deleted, the state, the
// conditions, the server states and the timing.
type planDigest struct {
	Create, Update, Delete []string
	State                  repotv1.EvaluationState
	Conditions             []string
	Servers                []string
	Started, Completed     bool
	RequeueAfter           time.Duration
	DeleteEvaluation       bool
	Events                 []string
}

func kindName(o Object) string {
	k := fmt.Sprintf("%T", o)
	return k[len("*v1."):] + "/" + o.GetName()
}

func digest(p Plan) planDigest {
	d := planDigest{State: p.Status.Summary.State, RequeueAfter: p.RequeueAfter, DeleteEvaluation: p.DeleteEvaluation,
		Started: p.Status.StartTime != nil, Completed: p.Status.CompletionTime != nil}
	for _, o := range p.Create {
		d.Create = append(d.Create, kindName(o))
	}
	for _, o := range p.Update {
		s := kindName(o)
		switch x := o.(type) {
		case *appsv1.Deployment:
			s += fmt.Sprintf(" replicas=%d", *x.Spec.Replicas)
		case *batchv1.Job:
			s += fmt.Sprintf(" suspend=%t", *x.Spec.Suspend)
		}
		d.Update = append(d.Update, s)
	}
	for _, a := range p.Annotate {
		keys := slices.Sorted(maps.Keys(a.Annotations))
		d.Update = append(d.Update, kindName(a.Object)+" annotate="+strings.Join(keys, ","))
	}
	for _, o := range p.Delete {
		d.Delete = append(d.Delete, kindName(o))
	}
	for _, c := range p.Status.Conditions {
		d.Conditions = append(d.Conditions, fmt.Sprintf("%s=%s/%s", c.Type, c.Status, c.Reason))
	}
	for _, m := range p.Status.Models {
		s := m.Name + "=" + string(m.Server.State)
		if m.Server.Reason != "" {
			s += "/" + m.Server.Reason
		}
		d.Servers = append(d.Servers, s)
	}
	for _, e := range p.Events {
		d.Events = append(d.Events, e.Reason)
	}
	return d
}

// applyToWorld does to the world and the evaluation what the reconciler
// does with a plan against the API server (a cluster without controllers).
func applyToWorld(e *repotv1.RepotEvaluation, w *World, p Plan) {
	*w = *project(w, &p)
	e.Status = *p.Status.DeepCopy()
	// The API server stores times at second precision.
	roundTimes(&e.Status)
}

func roundTimes(st *repotv1.RepotEvaluationStatus) {
	r := func(t *metav1.Time) *metav1.Time {
		if t == nil {
			return nil
		}
		return &metav1.Time{Time: t.Truncate(time.Second)}
	}
	st.StartTime, st.CompletionTime = r(st.StartTime), r(st.CompletionTime)
	for i := range st.Conditions {
		st.Conditions[i].LastTransitionTime = *r(&st.Conditions[i].LastTransitionTime)
	}
}

// setServerReady marks a model's Deployment ready as the Deployment
// controller would once the readiness sidecar passes.
func setServerReady(w *World, eval, model string, ready bool) {
	d := w.deployment(build.ServerName(eval, model))
	if ready {
		d.Status.ReadyReplicas = 1
	} else {
		d.Status.ReadyReplicas = 0
	}
}

// finishJob sets a Job's terminal condition as the Job controller would.
func finishJob(w *World, name string, t batchv1.JobConditionType, reason string) {
	j := w.job(name)
	j.Status.Conditions = append(j.Status.Conditions, batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: "test"})
}

// unschedulablePod is a server pod the scheduler could not place for 20
// minutes, past the default stalledAfterSeconds.
func unschedulablePod(eval, model string) corev1.Pod {
	return unschedulableFor(eval, model, 20*time.Minute)
}

// unschedulableFor is a server pod the scheduler could not place for d
// before t0.
func unschedulableFor(eval, model string, d time.Duration) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: build.ServerName(eval, model) + "-abc", Labels: build.ChildLabels(eval, model, build.ComponentServer)},
		Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message:            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
			LastTransitionTime: metav1.NewTime(t0.Add(-d)),
		}}},
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

var _ = ptr.To[int32]
