package planning

import (
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// modelTimes are the moments of one model's life. They are moments, not
// observations: each is set once, on the first pass that sees it happen,
// and carried over from the previous status like status.startTime. Every
// other per-model figure is recomputed from the world on every pass.
type modelTimes struct {
	Start, Running, Completion *metav1.Time
	// The current (or last) server: bound to a node, first ready, deleted
	// (or scaled to zero).
	ServerCreated, ServerReady, ServerDeleted *metav1.Time
	// Earlier sums up the servers before it (Count 0: none).
	Earlier repotv1.EarlierServers
}

// nextModelTimes carries the previous moments over and sets the ones this
// pass sees for the first time. w is the world after the plan is applied.
//
// A model's server may go before its runs are done (its Kueue Workload is
// evicted, spec.suspend scales it to zero) and come back later. The pass
// that sees it gone ends its span (ServerDeleted); the pass that sees a new
// server pod bound after that folds the ended span into Earlier and starts
// a new one, so the time in between holds no GPU.
func nextModelTimes(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec, s modelState, v serverView, ended bool) modelTimes {
	now := metav1.NewTime(w.Now)
	var t modelTimes
	if prev := previousModel(e, m.Name); prev != nil {
		t = modelTimes{prev.StartTime, prev.RunningTime, prev.CompletionTime, prev.ServerCreatedTime, prev.ServerReadyTime, prev.ServerDeletedTime, repotv1.EarlierServers{}}
		if prev.EarlierServers != nil {
			t.Earlier = *prev.EarlierServers
		}
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
	if !build.HasServer(m) {
		return t
	}
	d := serverDeployed(e, w, m)
	running := d != nil && ptr.Deref(d.Spec.Replicas, 1) > 0
	pods := w.serverPods(e.Name, m.Name)
	if t.Earlier.Count > 0 && t.ServerCreated != nil {
		// The current server's pods, not an earlier one's.
		pods = boundSince(pods, t.ServerCreated.Time)
	}
	// A new server after an ended span: its pods are bound since the end.
	if t.ServerDeleted != nil && running && !s.Done && !ended {
		pods = boundSince(pods, t.ServerDeleted.Time)
		if len(pods) == 0 && !v.Ready {
			return t
		}
		held, idle := serverGPUSeconds(t, m.ServerGPUs(), w.Records, m.Name, w.Now)
		t.Earlier.Count++
		t.Earlier.GPUSecondsHeld += held
		t.Earlier.GPUSecondsIdle += idle
		t.ServerCreated, t.ServerReady, t.ServerDeleted = nil, nil, nil
		if len(pods) == 0 {
			t.ServerCreated = &now
		}
	}
	if t.ServerCreated == nil {
		t.ServerCreated = earliest(pods, scheduledAt)
		if t.ServerCreated == nil && v.Ready && d != nil {
			// Ready without an observed pod (the cache missed it): the
			// Deployment's creation bounds the pod's.
			t.ServerCreated = &d.CreationTimestamp
		}
	}
	if t.ServerReady == nil && t.ServerCreated != nil && v.Ready {
		t.ServerReady = earliest(pods, readyAt)
		if t.ServerReady == nil {
			t.ServerReady = &now
		}
	}
	if t.ServerDeleted == nil && t.ServerCreated != nil && !running {
		t.ServerDeleted = &now
	}
	return t
}

// boundSince are the pods bound to a node at t or later (the API server
// keeps whole seconds).
func boundSince(pods []corev1.Pod, t time.Time) []corev1.Pod {
	var out []corev1.Pod
	for i := range pods {
		if at := scheduledAt(&pods[i]); at != nil && !at.Time.Before(t.Truncate(time.Second)) {
			out = append(out, pods[i])
		}
	}
	return out
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

// gpuSeconds returns the GPU-seconds a model's servers held: the earlier
// servers' and the current (or last) one's (created to
// deleted, or, while it runs, to now rounded down to a whole number of
// minutes since its creation) and the part of them it was idle: ready with
// no run of the model in flight. A run is in flight from its start to its end
// (contract.Record.StartedUnixMilli and WallMillis); the union of the runs
// of all shards is the time the server was busy.
func gpuSeconds(t modelTimes, gpus int32, records []contract.Record, model string, now time.Time) (held, idle int64) {
	held, idle = serverGPUSeconds(t, gpus, records, model, now)
	return t.Earlier.GPUSecondsHeld + held, t.Earlier.GPUSecondsIdle + idle
}

// serverGPUSeconds is gpuSeconds of the current (or last) server alone.
func serverGPUSeconds(t modelTimes, gpus int32, records []contract.Record, model string, now time.Time) (held, idle int64) {
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
func busyMillis(records []contract.Record, model string, from, to int64) int64 {
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
