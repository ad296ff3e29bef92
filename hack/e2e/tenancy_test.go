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
//   - an evaluation that ended (status.completionTime set) has released
//     both within endGrace.
//
// progressGrace is twice spec.stalledAfterSeconds (a runner pod stuck
// Pending is diagnosed after it once, and the server released after it
// again) plus startGrace for the server and runner to start.
const (
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
}

type progressMark struct {
	runsDone int32
	since    time.Time
}

// watchTenancy starts the watch on tc.
func (tc *testCluster) watchTenancy() {
	w := &tenancyWatch{tc: tc, stop: make(chan struct{}), done: make(chan struct{}),
		violations: map[string]string{}, progress: map[types.UID]progressMark{}}
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
	Expect(out).To(BeEmpty(), "an evaluation held GPUs or quota it could not use")
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
