package planning

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// sweep is four simulated models of one GPU each, two at a time.
func sweep() *repotv1.RepotEvaluation {
	w := revtesting.MakeEvaluation("ev", "ns").Shards(1).MaxParallelModels(2)
	for _, m := range []string{"m1", "m2", "m3", "m4"} {
		w = w.Simulated(m, "strong", 1).SimulatedGPUs(1)
	}
	return w.Obj()
}

func phases(st repotv1.RepotEvaluationStatus) []string {
	var out []string
	for _, m := range st.Models {
		out = append(out, m.Name+"="+string(m.Phase))
	}
	return out
}

func servers(w *World) []string {
	var out []string
	for _, d := range w.Deployments {
		out = append(out, d.Name)
	}
	return sortedStrings(out)
}

// A sweep with maxParallelModels 2 runs two models at a time in spec order;
// a model's server goes as soon as its runs are recorded, and the next
// queued model starts on the pass that sees it gone: the servers that exist
// when a pass begins plus the ones it creates never exceed the cap.
func TestModelLifecycle(t *testing.T) {
	e := sweep()
	w := newWorld()
	w.Problems.Count = 2 // 2 problems x 4 methods = 8 runs per model
	type want struct {
		Phases  []string
		Servers []string
	}
	steps := []struct {
		name   string
		before func()
		want   want
	}{{
		name: "first pass starts the first two models",
		want: want{[]string{"m1=Starting", "m2=Starting", "m3=Queued", "m4=Queued"}, []string{build.ServerName("ev", "m1"), build.ServerName("ev", "m2")}},
	}, {
		name:   "ready servers start their runners",
		before: func() { setServerReady(w, "ev", "m1", true); setServerReady(w, "ev", "m2", true) },
		want:   want{[]string{"m1=Running", "m2=Running", "m3=Queued", "m4=Queued"}, []string{build.ServerName("ev", "m1"), build.ServerName("ev", "m2")}},
	}, {
		name:   "m1's runs all recorded: its server goes, m3 waits for it to be gone",
		before: func() { w.Records = append(w.Records, runs("m1", 2, t0)...) },
		want:   want{[]string{"m1=Done", "m2=Running", "m3=Queued", "m4=Queued"}, []string{build.ServerName("ev", "m2")}},
	}, {
		name: "m1's server gone: m3 starts",
		want: want{[]string{"m1=Done", "m2=Running", "m3=Starting", "m4=Queued"}, []string{build.ServerName("ev", "m2"), build.ServerName("ev", "m3")}},
	}, {
		name:   "m2's Job completed: its server goes",
		before: func() { finishJob(w, build.RunnerJobName("ev", "m2"), batchv1.JobComplete, "Completed") },
		want:   want{[]string{"m1=Done", "m2=Done", "m3=Starting", "m4=Queued"}, []string{build.ServerName("ev", "m3")}},
	}, {
		name: "m2's server gone: m4 starts",
		want: want{[]string{"m1=Done", "m2=Done", "m3=Starting", "m4=Starting"}, []string{build.ServerName("ev", "m3"), build.ServerName("ev", "m4")}},
	}, {
		name:   "m1's Job completed too: no runner is active while m3 and m4 start",
		before: func() { finishJob(w, build.RunnerJobName("ev", "m1"), batchv1.JobComplete, "Completed") },
		want:   want{[]string{"m1=Done", "m2=Done", "m3=Starting", "m4=Starting"}, []string{build.ServerName("ev", "m3"), build.ServerName("ev", "m4")}},
	}}
	now := t0
	for _, s := range steps {
		if s.before != nil {
			s.before()
		}
		now = now.Add(time.Minute)
		// The passes this change brings, until one creates nothing.
		var p Plan
		for range 10 {
			before := len(w.Deployments)
			p = step(e, w, now)
			created := 0
			for _, o := range p.Create {
				if _, ok := o.(*appsv1.Deployment); ok {
					created++
				}
			}
			if before+created > 2 {
				t.Fatalf("%s: %d servers existed and %d were created in one pass, more than maxParallelModels 2", s.name, before, created)
			}
			if len(p.Create) == 0 {
				break
			}
		}
		got := want{phases(p.Status), servers(w)}
		if diff := cmp.Diff(s.want, got); diff != "" {
			t.Fatalf("%s (-want +got):\n%s", s.name, diff)
		}
		// From its first recorded run until its last, a sweep reads
		// Running, also while no runner is active between one model's
		// server and the next one's; the per-model phases carry the rest.
		if len(w.Records) > 0 && p.Status.Summary.State != repotv1.StateRunning {
			t.Errorf("%s: state %s, want Running once runs are recorded", s.name, p.Status.Summary.State)
		}
		if len(w.Deployments) > 2 {
			t.Fatalf("%s: %d servers exist, more than maxParallelModels 2", s.name, len(w.Deployments))
		}
	}
	m1 := e.Status.Models[0]
	if m1.StartTime == nil || m1.RunningTime == nil || m1.CompletionTime == nil {
		t.Errorf("m1 times not all set: start %v running %v completion %v", m1.StartTime, m1.RunningTime, m1.CompletionTime)
	}
	if m1.Server.State != repotv1.ServerStopped {
		t.Errorf("m1 server state %s, want Stopped", m1.Server.State)
	}
	if m1.RunsDone != 8 {
		t.Errorf("m1 runsDone %d, want its results kept (8)", m1.RunsDone)
	}
}

// runs are the 2 x 4 records of a model, each started at t and 1 s long.
func runs(model string, problems int, t time.Time) []contract.Record {
	var out []contract.Record
	for p := range problems {
		for _, m := range repotv1.DefaultMethods() {
			out = append(out, contract.Record{Model: model, ProblemID: fmt.Sprint("p", p), Method: string(m),
				StartedUnixMilli: t.UnixMilli(), WallMillis: 1000})
		}
	}
	return out
}

// The admission gate: only admitted models start; a model no longer
// admitted loses its server and runners, never its ledgers.
func TestModelAdmission(t *testing.T) {
	e := sweep()
	w := newWorld()
	w.Admitted = map[string]bool{"m3": true}
	p := step(e, w, t0)
	if diff := cmp.Diff([]string{"m1=Queued", "m2=Queued", "m3=Starting", "m4=Queued"}, phases(p.Status)); diff != "" {
		t.Fatalf("phases (-want +got):\n%s", diff)
	}
	setServerReady(w, "ev", "m3", true)
	settle(e, w, t0.Add(time.Second))
	if w.job(build.RunnerJobName("ev", "m3")) == nil {
		t.Fatal("admitted m3 has no runner Job")
	}
	w.Admitted = map[string]bool{}
	p = step(e, w, t0.Add(2*time.Second))
	if diff := cmp.Diff([]string{"Deployment/" + build.ServerName("ev", "m3"), "Service/" + build.ServerName("ev", "m3"), "Job/" + build.RunnerJobName("ev", "m3")}, digest(p).Delete); diff != "" {
		t.Errorf("eviction deletes (-want +got):\n%s", diff)
	}
	if !w.hasLedger(build.LedgerName("ev", "m3", 0)) {
		t.Error("eviction removed m3's ledger")
	}
	if got := p.Status.Models[2].Phase; got != repotv1.ModelQueued {
		t.Errorf("evicted m3 phase %s, want Queued", got)
	}
}

func TestGPUSeconds(t *testing.T) {
	at := func(s int) *metav1.Time { return &metav1.Time{Time: t0.Add(time.Duration(s) * time.Second)} }
	rec := func(startS, wallS int) contract.Record {
		return contract.Record{Model: "m", StartedUnixMilli: t0.Add(time.Duration(startS) * time.Second).UnixMilli(), WallMillis: int64(wallS) * 1000}
	}
	cases := []struct {
		name       string
		times      modelTimes
		gpus       int32
		records    []contract.Record
		now        int
		held, idle int64
	}{
		{name: "never scheduled", times: modelTimes{}, gpus: 1, now: 100},
		{name: "endpoint holds no GPU", times: modelTimes{ServerCreated: at(0)}, gpus: 0, now: 100},
		{name: "starting, not ready: held, not idle", times: modelTimes{ServerCreated: at(0)}, gpus: 2, now: 90, held: 120},
		{name: "while it runs, whole minutes since creation", times: modelTimes{ServerCreated: at(0)}, gpus: 1, now: 59, held: 0},
		{name: "ready with no runs: idle from ready to now", times: modelTimes{ServerCreated: at(0), ServerReady: at(10)}, gpus: 1, now: 70, held: 60, idle: 50},
		{
			name: "overlapping runs of two shards count once; gaps are idle", gpus: 2,
			times: modelTimes{ServerCreated: at(0), ServerReady: at(10), ServerDeleted: at(100)},
			// busy [10,40) u [30,50) = 40 s, [60,70) = 10 s; ready 90 s: idle 40 s.
			records: []contract.Record{rec(10, 30), rec(30, 20), rec(60, 10), {Model: "other", StartedUnixMilli: t0.UnixMilli(), WallMillis: 100000}},
			now:     500, held: 200, idle: 80,
		},
		{
			name: "runs outside the ready span are clipped", gpus: 1,
			times:   modelTimes{ServerCreated: at(0), ServerReady: at(10), ServerDeleted: at(20)},
			records: []contract.Record{rec(0, 15), rec(18, 30)},
			now:     30, held: 20, idle: 3,
		},
		{
			name: "records without a start time count as idle (written before it existed)", gpus: 1,
			times:   modelTimes{ServerCreated: at(0), ServerReady: at(0), ServerDeleted: at(10)},
			records: []contract.Record{{Model: "m", WallMillis: 5000}},
			now:     10, held: 10, idle: 10,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			held, idle := gpuSeconds(tc.times, tc.gpus, tc.records, "m", t0.Add(time.Duration(tc.now)*time.Second))
			if held != tc.held || idle != tc.idle {
				t.Errorf("gpuSeconds = held %d idle %d, want %d %d", held, idle, tc.held, tc.idle)
			}
		})
	}
}

// The moments come from the pods: scheduled (not created) starts the held
// time, the pod's Ready transition starts the ready time.
func TestModelTimesFromPods(t *testing.T) {
	e := sweep()
	w := newWorld()
	step(e, w, t0)
	pod := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ev-m1-server-x", Labels: build.ChildLabels("ev", "m1", build.ComponentServer)},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(5 * time.Second))},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0.Add(20 * time.Second))},
		}}}
	w.ServerPods = []corev1.Pod{pod}
	setServerReady(w, "ev", "m1", true)
	p := step(e, w, t0.Add(65*time.Second))
	m1 := p.Status.Models[0]
	if !m1.ServerCreatedTime.Time.Equal(t0.Add(5*time.Second)) || !m1.ServerReadyTime.Time.Equal(t0.Add(20*time.Second)) {
		t.Errorf("server created %v ready %v, want t0+5s and t0+20s", m1.ServerCreatedTime, m1.ServerReadyTime)
	}
	if m1.GPUSecondsHeld != 60 || m1.GPUSecondsIdle != 45 {
		t.Errorf("held %d idle %d, want 60 and 45", m1.GPUSecondsHeld, m1.GPUSecondsIdle)
	}
}

// A simulated server with gpus requests and tolerates them, as vLLM does.
func TestSimulatedServerRequestsGPUs(t *testing.T) {
	e := sweep()
	d := build.ServerDeployment(e, &e.Spec.Models[0], testOpts, 1)
	c := d.Spec.Template.Spec.Containers[0]
	if q := c.Resources.Limits[build.GPUResource]; q.Value() != 1 {
		t.Errorf("GPU limit %v, want 1", q.String())
	}
	if tl := d.Spec.Template.Spec.Tolerations; len(tl) != 1 || tl[0].Key != string(build.GPUResource) {
		t.Errorf("tolerations %v, want the GPU taint's", tl)
	}
	plain := revtesting.MakeEvaluation("ev", "ns").Simulated("s", "weak", 1).Obj()
	if _, ok := build.ServerDeployment(plain, &plain.Spec.Models[0], testOpts, 1).Spec.Template.Spec.Containers[0].Resources.Limits[build.GPUResource]; ok {
		t.Error("a simulated server without gpus requests GPUs")
	}
}

// boundPod is a server pod of a model bound to a node at t0+bound seconds
// and ready at t0+ready seconds.
func boundPod(model string, bound, ready int) corev1.Pod {
	at := func(s int) metav1.Time { return metav1.NewTime(t0.Add(time.Duration(s) * time.Second)) }
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("ev-%s-server-%d", model, bound), Labels: build.ChildLabels("ev", model, build.ComponentServer)},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(bound)},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(ready)},
		}}}
}

// A model whose server goes before its runs are done (evicted by Kueue, or
// scaled to zero by spec.suspend) holds no GPU until a new server's pod is
// bound; the new server's seconds add to the earlier one's.
func TestGPUSecondsAcrossServers(t *testing.T) {
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type want struct {
		Held, Idle int64
		Earlier    *repotv1.EarlierServers
		Created    time.Time
		Deleted    bool
	}
	check := func(t *testing.T, p Plan, w want) {
		t.Helper()
		m := p.Status.Models[0]
		got := want{Held: m.GPUSecondsHeld, Idle: m.GPUSecondsIdle, Earlier: m.EarlierServers, Deleted: m.ServerDeletedTime != nil}
		if m.ServerCreatedTime != nil {
			got.Created = m.ServerCreatedTime.Time
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("m1 GPU time (-want +got):\n%s", diff)
		}
	}
	// Both cases: m1's first server is bound at 5 s and ready at 10 s; its
	// four runs start at 20 s and last 1 s; the server goes at 71 s (held
	// 66 s, idle 60 s). A new pod is bound at 300 s, ready at 310 s.
	cases := []struct {
		name           string
		remove, reruns func(e *repotv1.RepotEvaluation, w *World)
	}{
		{
			name:   "evicted and admitted again",
			remove: func(e *repotv1.RepotEvaluation, w *World) { w.Admitted = map[string]bool{} },
			reruns: func(e *repotv1.RepotEvaluation, w *World) { w.Admitted = map[string]bool{"m1": true} },
		},
		{
			name:   "suspended and resumed",
			remove: func(e *repotv1.RepotEvaluation, w *World) { e.Spec.Suspend = ptr.To(true) },
			reruns: func(e *repotv1.RepotEvaluation, w *World) { e.Spec.Suspend = nil },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := sweep()
			w := newWorld()
			w.Problems.Count = 2
			w.Admitted = map[string]bool{"m1": true}
			settle(e, w, at(0))
			w.ServerPods = []corev1.Pod{boundPod("m1", 5, 10)}
			setServerReady(w, "ev", "m1", true)
			settle(e, w, at(10))
			w.Records = runs("m1", 1, at(20))
			check(t, step(e, w, at(70)), want{Held: 60, Idle: 54, Created: at(5)})

			tc.remove(e, w)
			check(t, step(e, w, at(71)), want{Held: 66, Idle: 60, Created: at(5), Deleted: true})
			if d := w.deployment(build.ServerName("ev", "m1")); d != nil {
				d.Status.ReadyReplicas = 0
			}
			check(t, step(e, w, at(200)), want{Held: 66, Idle: 60, Created: at(5), Deleted: true})

			tc.reruns(e, w)
			settle(e, w, at(250))
			if d := serverDeployed(e, w, &e.Spec.Models[0]); d == nil || ptr.Deref(d.Spec.Replicas, 1) != 1 {
				t.Fatalf("m1 has no running server again: %v", d)
			}
			// Before a new pod is bound, the old (terminating) pod counts for nothing.
			check(t, step(e, w, at(280)), want{Held: 66, Idle: 60, Created: at(5), Deleted: true})
			w.ServerPods = append(w.ServerPods, boundPod("m1", 300, 310))
			setServerReady(w, "ev", "m1", true)
			p := settle(e, w, at(310))
			if got := p.Status.Models[0].ServerReadyTime; got == nil || !got.Time.Equal(at(310)) {
				t.Errorf("new server ready at %v, want the new pod's ready time %v", got, at(310))
			}
			// 300 s -> 420 s (whole minutes while it runs), ready from 310 s.
			check(t, step(e, w, at(430)), want{Held: 66 + 120, Idle: 60 + 110, Created: at(300),
				Earlier: &repotv1.EarlierServers{Count: 1, GPUSecondsHeld: 66, GPUSecondsIdle: 60}})

			// A second time: the second server held 300 s -> 500 s (idle
			// from 310 s), and the third is bound at 700 s, ready at 705 s.
			tc.remove(e, w)
			step(e, w, at(500))
			if d := w.deployment(build.ServerName("ev", "m1")); d != nil {
				d.Status.ReadyReplicas = 0
			}
			tc.reruns(e, w)
			settle(e, w, at(650))
			w.ServerPods = append(w.ServerPods, boundPod("m1", 700, 705))
			setServerReady(w, "ev", "m1", true)
			settle(e, w, at(705))
			check(t, step(e, w, at(760)), want{Held: 66 + 200 + 60, Idle: 60 + 190 + 55, Created: at(700),
				Earlier: &repotv1.EarlierServers{Count: 2, GPUSecondsHeld: 66 + 200, GPUSecondsIdle: 60 + 190}})
		})
	}
}
