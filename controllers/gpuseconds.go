package controllers

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/runner/summary"
)

// modelTimes are the moments of one model's life. They are moments, not
// observations: each is set once, on the first pass that sees it happen,
// and carried over from the previous status like status.startTime. Every
// other per-model figure is recomputed from the world on every pass.
type modelTimes struct {
	Start, Running, Completion                *metav1.Time
	ServerCreated, ServerReady, ServerDeleted *metav1.Time
}

// nextModelTimes carries the previous moments over and sets the ones this
// pass sees for the first time. w is the world after the plan is applied.
func nextModelTimes(e *repotv1.RepotEvaluation, w *world, m *repotv1.ModelSpec, s modelState, v serverView, ended bool) modelTimes {
	now := metav1.NewTime(w.Now)
	var t modelTimes
	if prev := previousModel(e, m.Name); prev != nil {
		t = modelTimes{prev.StartTime, prev.RunningTime, prev.CompletionTime, prev.ServerCreatedTime, prev.ServerReadyTime, prev.ServerDeletedTime}
	}
	if t.Start == nil && (s.Active || s.Done) {
		t.Start = &now
	}
	if t.Running == nil && s.Phase == repotv1.ModelRunning {
		t.Running = &now
	}
	if t.Completion == nil && s.Done {
		t.Completion = &now
	}
	if !hasServer(m) {
		return t
	}
	pods := w.serverPods(e.Name, m.Name)
	if t.ServerCreated == nil {
		t.ServerCreated = earliest(pods, scheduledAt)
		if t.ServerCreated == nil && v.Ready {
			// Ready without an observed pod (the cache missed it): the
			// Deployment's creation bounds the pod's.
			if d := serverDeployed(e, w, m); d != nil {
				t.ServerCreated = &d.CreationTimestamp
			}
		}
	}
	if t.ServerReady == nil && v.Ready {
		t.ServerReady = earliest(pods, readyAt)
		if t.ServerReady == nil {
			t.ServerReady = &now
		}
	}
	if t.ServerDeleted == nil && t.ServerCreated != nil && (s.Done || ended) && serverDeployed(e, w, m) == nil {
		t.ServerDeleted = &now
	}
	return t
}

// earliest is the earliest moment f gives over the pods, or nil.
func earliest(pods []corev1.Pod, f func(*corev1.Pod) *metav1.Time) *metav1.Time {
	var out *metav1.Time
	for i := range pods {
		if t := f(&pods[i]); t != nil && (out == nil || t.Before(out)) {
			out = t.DeepCopy()
		}
	}
	return out
}

// scheduledAt is when the pod was bound to a node (from then on it holds
// its GPUs), or nil while it waits for one.
func scheduledAt(p *corev1.Pod) *metav1.Time {
	c := podCondition(p, corev1.PodScheduled)
	switch {
	case c != nil && c.Status == corev1.ConditionTrue && !c.LastTransitionTime.IsZero():
		return &c.LastTransitionTime
	case p.Spec.NodeName != "":
		return &p.CreationTimestamp
	}
	return nil
}

// readyAt is when the pod last became ready, or nil if it is not.
func readyAt(p *corev1.Pod) *metav1.Time {
	c := podCondition(p, corev1.PodReady)
	if c == nil || c.Status != corev1.ConditionTrue || c.LastTransitionTime.IsZero() {
		return nil
	}
	return &c.LastTransitionTime
}

// runningGranularity is the step in which the GPU-seconds of a server that
// still runs grow: the status then changes at most once a minute on their
// account, not on every pass.
const runningGranularity = time.Minute

// gpuSeconds returns the GPU-seconds a model's server held (created to
// deleted, or, while it runs, to now rounded down to a whole number of
// minutes since its creation) and the part of them it was idle: ready with
// no run of the model in flight. A run is in flight from its start to its end
// (summary.Record.StartedUnixMilli and WallMillis); the union of the runs
// of all shards is the time the server was busy.
func gpuSeconds(t modelTimes, gpus int32, records []summary.Record, model string, now time.Time) (held, idle int64) {
	if gpus <= 0 || t.ServerCreated == nil {
		return 0, 0
	}
	end := t.ServerCreated.Add(now.Sub(t.ServerCreated.Time).Truncate(runningGranularity))
	if t.ServerDeleted != nil {
		end = t.ServerDeleted.Time
	}
	if !end.After(t.ServerCreated.Time) {
		return 0, 0
	}
	held = int64(end.Sub(t.ServerCreated.Time)/time.Second) * int64(gpus)
	if t.ServerReady == nil || !end.After(t.ServerReady.Time) {
		return held, 0
	}
	from, to := t.ServerReady.Time.UnixMilli(), end.UnixMilli()
	busy := busyMillis(records, model, from, to)
	idle = (to - from - busy) / 1000 * int64(gpus)
	return held, max(idle, 0)
}

// busyMillis is the length of the union of the model's runs, clipped to
// [from, to), in milliseconds.
func busyMillis(records []summary.Record, model string, from, to int64) int64 {
	type span struct{ a, b int64 }
	var spans []span
	for i := range records {
		r := &records[i]
		if r.Model != model || r.StartedUnixMilli <= 0 || r.WallMillis <= 0 {
			continue
		}
		a, b := max(r.StartedUnixMilli, from), min(r.StartedUnixMilli+r.WallMillis, to)
		if a < b {
			spans = append(spans, span{a, b})
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].a < spans[j].a })
	var total, curA, curB int64
	open := false
	for _, s := range spans {
		switch {
		case !open:
			curA, curB, open = s.a, s.b, true
		case s.a <= curB:
			curB = max(curB, s.b)
		default:
			total += curB - curA
			curA, curB = s.a, s.b
		}
	}
	if open {
		total += curB - curA
	}
	return total
}
