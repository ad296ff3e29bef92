//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter/kueuetesting"
)

// The good-tenant invariant, checked in every real-node spec (bootRealCluster
// starts the watch, testCluster.stop checks it): on a GPU pool shared with
// other teams,
//
//   - an evaluation whose runners have made no progress (status.progress.
//     runsDone has not grown, and it is neither suspended nor ended) for
//     longer than progressGrace(e) holds no server replicas and no Kueue
//     quota;
//
//   - an evaluation that ended (status.completionTime set) has released
//     both within endGrace.
//
//   - a model that reads Starting or Running has a pod (its server's or
//     its runners'), or a reason in its status (its server's reason, or
//     the evaluation Stalled), within podGrace: a model that runs nothing
//     and says nothing is a hang nobody is told about (a pod the API server
//     refuses, a Workload Kueue evicted).
//
// progressGrace is twice spec.stalledAfterSeconds (a runner pod stuck
// Pending is diagnosed after it once, and the server released after it
// again) plus startGrace for the server and runner to start.
const (
	podGrace    = 90 * time.Second
	endGrace    = 90 * time.Second
	startGrace  = 120 * time.Second
	tenancyTick = 2 * time.Second
)

func progressGrace(e *repotv1.RepotEvaluation) time.Duration {
	return 2*time.Duration(e.Spec.StalledAfterSecondsOrDefault())*time.Second + startGrace
}

// tenancyWatch polls the cluster for the invariant and collects its
// violations.
type tenancyWatch struct {
	tc   *testCluster
	stop chan struct{}
	done chan struct{}

	mu         sync.Mutex
	violations map[string]string // by evaluation and kind, the first seen
	// progress is, by evaluation UID, the last runsDone seen and when it
	// last grew (or the evaluation was last suspended).
	progress map[types.UID]progressMark
	// silent is, by evaluation UID and model, when the model was first
	// seen Starting or Running with no pod and no reason.
	silent map[string]time.Time
}

type progressMark struct {
	runsDone int32
	since    time.Time
}

// watchTenancy starts the watch on tc.
func (tc *testCluster) watchTenancy() {
	w := &tenancyWatch{tc: tc, stop: make(chan struct{}), done: make(chan struct{}),
		violations: map[string]string{}, progress: map[types.UID]progressMark{}, silent: map[string]time.Time{}}
	tc.tenancy = w
	go func() {
		defer GinkgoRecover()
		defer close(w.done)
		tick := time.NewTicker(tenancyTick)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			w.check(time.Now())
		}
	}()
}

// checkTenancy stops the watch and fails the spec on any violation.
func (tc *testCluster) checkTenancy() {
	w := tc.tenancy
	if w == nil {
		return
	}
	tc.tenancy = nil
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, v := range w.violations {
		out = append(out, v)
	}
	sort.Strings(out)
	Expect(out).To(BeEmpty(), "an evaluation held GPUs or quota it could not use, or a model hung without a word")
}

// check reads evaluations, server Deployments and Workloads once; a read
// that fails (a busy API server, the Kueue CRD not installed) skips what it
// would have checked.
func (w *tenancyWatch) check(now time.Time) {
	ctx, cancel := ctxTimeout(20 * time.Second)
	defer cancel()
	var evals repotv1.RepotEvaluationList
	if err := w.tc.c.List(ctx, &evals); err != nil {
		return
	}
	var deps appsv1.DeploymentList
	if err := w.tc.c.List(ctx, &deps, client.MatchingLabels{build.LabelComponent: build.ComponentServer}); err != nil {
		return
	}
	replicas := map[types.UID]int32{}
	for _, d := range deps.Items {
		if ref := metav1.GetControllerOf(&d); ref != nil && d.DeletionTimestamp == nil {
			replicas[ref.UID] += ptr.Deref(d.Spec.Replicas, 1)
		}
	}
	var pods corev1.PodList
	if err := w.tc.c.List(ctx, &pods, client.HasLabels{build.LabelModel}); err != nil {
		return
	}
	// live counts, by evaluation name, namespace and model, the pods of
	// servers and runners that are not over.
	live := map[string]int{}
	for _, p := range pods.Items {
		c := p.Labels[build.LabelComponent]
		if (c == build.ComponentServer || c == build.ComponentRunner) && p.DeletionTimestamp == nil &&
			p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live[p.Namespace+"/"+p.Labels[build.LabelEvaluation]+"/"+p.Labels[build.LabelModel]]++
		}
	}
	quota := map[types.UID][]string{}
	var wls kueue.WorkloadList
	if err := w.tc.c.List(ctx, &wls); err == nil {
		for i := range wls.Items {
			wl := &wls.Items[i]
			if ref := metav1.GetControllerOf(wl); ref != nil && kueuetesting.HoldsQuota(wl) {
				quota[ref.UID] = append(quota[ref.UID], wl.Name)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range evals.Items {
		e := &evals.Items[i]
		id := e.Namespace + "/" + e.Name
		holds := func() string {
			var s string
			if n := replicas[e.UID]; n > 0 {
				s = fmt.Sprintf("%d server replica(s)", n)
			}
			if q := quota[e.UID]; len(q) > 0 {
				if s != "" {
					s += " and "
				}
				s += fmt.Sprintf("the Kueue quota of %v", q)
			}
			return s
		}
		if ct := e.Status.CompletionTime; ct != nil {
			if now.Sub(ct.Time) > endGrace {
				if h := holds(); h != "" {
					w.violate(id+"/ended", fmt.Sprintf("%s: %s ended (%s) at %s and still holds %s after %s",
						now.Format(time.TimeOnly), id, state(e), ct.Format(time.TimeOnly), h, endGrace))
				}
			}
			continue
		}
		w.checkSilent(e, id, live, now)
		var done int32
		if e.Status.Progress != nil {
			done = e.Status.Progress.RunsDone
		}
		mark, seen := w.progress[e.UID]
		if !seen || done > mark.runsDone || e.Spec.IsSuspended() {
			w.progress[e.UID] = progressMark{runsDone: done, since: now}
			continue
		}
		if idle := now.Sub(mark.since); idle > progressGrace(e) {
			if h := holds(); h != "" {
				w.violate(id+"/idle", fmt.Sprintf("%s: %s (%s) has recorded no run for %s (runsDone %d), more than %s, and still holds %s",
					now.Format(time.TimeOnly), id, state(e), idle.Round(time.Second), done, progressGrace(e), h))
			}
		}
	}
}

// checkSilent applies the rule on silent models to e (not ended): each
// model that reads Starting or Running, in an evaluation neither suspended
// nor deleted, with no live pod (live) and no reason (its server's, or the
// evaluation Stalled) for longer than podGrace is a violation.
func (w *tenancyWatch) checkSilent(e *repotv1.RepotEvaluation, id string, live map[string]int, now time.Time) {
	stalled := apimeta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionStalled)
	for _, m := range e.Status.Models {
		k := string(e.UID) + "/" + m.Name
		// A deleted evaluation's status is no longer rebuilt (its
		// deletion waits on its pods and its store, by design).
		quiet := e.DeletionTimestamp == nil && !e.Spec.IsSuspended() && !stalled && m.Server.Reason == "" &&
			(m.Phase == repotv1.ModelStarting || m.Phase == repotv1.ModelRunning) && live[e.Namespace+"/"+e.Name+"/"+m.Name] == 0
		if !quiet {
			delete(w.silent, k)
			continue
		}
		since, seen := w.silent[k]
		if !seen {
			w.silent[k] = now
			continue
		}
		if d := now.Sub(since); d > podGrace {
			w.violate(id+"/"+m.Name+"/silent", fmt.Sprintf("%s: model %s of %s reads %s with no pod and no reason in its status for %s (more than %s)",
				now.Format(time.TimeOnly), m.Name, id, m.Phase, d.Round(time.Second), podGrace))
		}
	}
}

func (w *tenancyWatch) violate(key, msg string) {
	if _, ok := w.violations[key]; !ok {
		w.violations[key] = msg
	}
}

// state is an evaluation's summary state and its Stalled condition's
// reason, for a violation's message.
func state(e *repotv1.RepotEvaluation) string {
	s := "no state"
	if e.Status.Summary != nil {
		s = string(e.Status.Summary.State)
	}
	if c := apimeta.FindStatusCondition(e.Status.Conditions, repotv1.ConditionStalled); c != nil && c.Status == metav1.ConditionTrue {
		s += "/" + c.Reason
	}
	return s
}
