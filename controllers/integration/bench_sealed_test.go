package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// Scale of the sealed-evaluations benchmark: evaluations of one simulated
// model in one shard, whose ledger holds every run of the default suite
// and methods (120 problems x 4 methods) at sealedRecordBytes a record:
// 960 KB, a full ledger (contract.MaxLedgerBytes).
var (
	sealedEvaluations = envInt("REPOT_BENCH_SEALED_EVALUATIONS", 40)
	sealedRuns        = 120 * len(repotv1.DefaultMethods())
	sealedRecordBytes = 2000
)

// BenchmarkSealedEvaluations measures the heap the operator holds for
// finished evaluations with full ledgers. The manager runs N evaluations
// (REPOT_BENCH_SEALED_EVALUATIONS, default 40), each with one ledger of
// 480 records (960 KB), against the real API server, and the heap in use
// after a GC is reported at three points:
//
//   - heap-MiB-unsealed: every ledger full and counted, the runner Jobs not
//     finished: the cache holds every ledger's text and the RecordCache
//     its parsed records, as the operator held them for every finished
//     evaluation before sealing;
//   - heap-MiB-sealed: the Jobs finished, every evaluation Complete and its
//     ledgers sealed (the cache holds them without data, the RecordCache
//     nothing of them);
//   - heap-MiB-restarted: a fresh manager reconciled every sealed
//     evaluation again (statuses rebuilt from the ledgers read from the API
//     server), with MiB-peak-heap-restart the peak on the way.
//
// heap-MiB-base is the heap before the first manager started; live-MiB-*
// are the live objects' bytes at the same points. No heap is
// asserted on: the numbers go to docs/operations.md.
//
//	go test ./controllers/integration/ -run '^$' -bench SealedEvaluations -benchtime 1x
func BenchmarkSealedEvaluations(b *testing.B) {
	runBenchmark(b, "repot-bench-sealed-manager", sealedOnce)
}

// passes counts the manager's reconciles and tells when it is idle.
type passes struct {
	started, done atomic.Int64
	last          atomic.Int64 // UnixNano of the last reconcile's end
}

func (p *passes) wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		p.started.Add(1)
		defer func() { p.last.Store(time.Now().UnixNano()); p.done.Add(1) }()
		return r.Reconcile(ctx, req)
	})
}

// waitIdle waits until no reconcile ran for quiet.
func (p *passes) waitIdle(quiet time.Duration) {
	for {
		if p.started.Load() == p.done.Load() && time.Since(time.Unix(0, p.last.Load())) > quiet {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// heapInUse is the heap in use after a full collection, and the live
// objects' bytes in it (the rest is the collected objects' room in spans
// that still hold live ones).
func heapInUse() (inUse, live uint64) {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse, ms.HeapAlloc
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }

func sealedOnce(b *testing.B, cfg, asManager *rest.Config, iter int) {
	c, err := newClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	bg := context.Background()
	ns := fmt.Sprintf("sealed-%d-%d", iter, time.Now().UnixNano()%100000)
	if err := c.Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	base, _ := heapInUse()
	p := &passes{}
	m, err := startManagerWrapped("", asManager, nil, nil, nil, p.wrap)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if m != nil {
			_ = m.Stop()
		}
	}()
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var finish atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); playFullLedgers(ctx, c, ns, &finish) }()

	b.ResetTimer()
	for i := range sealedEvaluations {
		e := revtesting.MakeEvaluation(fmt.Sprintf("ev%03d", i), ns).Simulated("m", "strong", int64(i)).Shards(1).Obj()
		if err := c.Create(bg, e); err != nil {
			b.Fatal(err)
		}
	}
	if sp := build.LedgerSpills(revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()); sp != 0 {
		b.Fatalf("the benchmark's evaluations have %d spills per ledger; it writes the ledger alone", sp)
	}

	// 1. Every ledger full and counted; the runners not finished.
	waitFor(b, "every ledger counted", func() (bool, string) {
		return evaluationsAre(m.GetCache(), ns, repotv1.StateRunning, false)
	})
	p.waitIdle(2 * time.Second)
	unsealed, unsealedLive := heapInUse()

	// 2. The runners finish: Complete, then sealed.
	finish.Store(true)
	waitFor(b, "every evaluation Complete and sealed", func() (bool, string) {
		ok, state := evaluationsAre(m.GetCache(), ns, repotv1.StateComplete, true)
		if ok {
			return true, ""
		}
		_, stored := evaluationsAre(c, ns, repotv1.StateComplete, true)
		return false, "in the cache: " + state + "; as stored: " + stored + "; " + jobStates(c, ns)
	})
	p.waitIdle(2 * time.Second)
	sealed, sealedLive := heapInUse()
	cancel()
	wg.Wait()

	// 3. A fresh manager reconciles every sealed evaluation again.
	if err := m.Stop(); err != nil {
		b.Fatal(err)
	}
	m = nil
	beforeRestart, _ := heapInUse()
	p2 := &passes{}
	var peak uint64
	peakCtx, stopPeak := context.WithCancel(bg)
	var pw sync.WaitGroup
	pw.Add(1)
	go func() { defer pw.Done(); samplePeakHeap(peakCtx, &peak) }()
	m, err = startManagerWrapped("", asManager, nil, nil, nil, p2.wrap)
	if err != nil {
		b.Fatal(err)
	}
	waitFor(b, "every evaluation reconciled after the restart", func() (bool, string) {
		if n := p2.done.Load(); n < int64(sealedEvaluations) {
			return false, fmt.Sprintf("%d reconciles", n)
		}
		return evaluationsAre(m.GetCache(), ns, repotv1.StateComplete, true)
	})
	p2.waitIdle(2 * time.Second)
	stopPeak()
	pw.Wait()
	restarted, restartedLive := heapInUse()
	b.StopTimer()

	n := float64(sealedEvaluations)
	b.ReportMetric(mib(base), "heap-MiB-base")
	b.ReportMetric(mib(unsealed), "heap-MiB-unsealed")
	b.ReportMetric(mib(sealed), "heap-MiB-sealed")
	b.ReportMetric(mib(restarted), "heap-MiB-restarted")
	b.ReportMetric(mib(peak), "MiB-peak-heap-restart")
	b.ReportMetric(mib(unsealedLive), "live-MiB-unsealed")
	b.ReportMetric(mib(sealedLive), "live-MiB-sealed")
	b.ReportMetric(mib(restartedLive), "live-MiB-restarted")
	b.ReportMetric(1024*mib(unsealed-min(unsealed, base))/n, "KiB/evaluation-unsealed")
	b.ReportMetric(1024*mib(sealed-min(sealed, base))/n, "KiB/evaluation-sealed")
	b.ReportMetric(1024*mib(restarted-min(restarted, beforeRestart))/n, "KiB/evaluation-restarted")
	fmt.Fprintf(os.Stderr, "%d evaluations, a %d-byte ledger each: heap in use %.1f MiB before the manager, %.1f unsealed, %.1f sealed, %.1f after a restart (peak %.1f)\n",
		sealedEvaluations, sealedRuns*sealedRecordBytes, mib(base), mib(unsealed), mib(sealed), mib(restarted), mib(peak))
}

// waitFor polls done until it holds, for at most 5 minutes.
func waitFor(b *testing.B, what string, done func() (bool, string)) {
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ok, state := done()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: not after 5 minutes (%s)", what, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// evaluationsAre reports whether every evaluation reads state with every
// run counted and, when sealed, whether the cache holds every ledger
// sealed and without data. It reads the manager's cache without copies.
func evaluationsAre(c client.Reader, ns string, state repotv1.EvaluationState, sealed bool) (bool, string) {
	var evs repotv1.RepotEvaluationList
	if err := c.List(context.Background(), &evs, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return false, err.Error()
	}
	ready := 0
	others := map[string]int{}
	for _, e := range evs.Items {
		if e.Status.Summary != nil && e.Status.Summary.State == state && e.Status.Progress != nil && e.Status.Progress.RunsDone == int32(sealedRuns) {
			ready++
			continue
		}
		k := "no status"
		if e.Status.Summary != nil && e.Status.Progress != nil {
			k = fmt.Sprintf("%s/%d", e.Status.Summary.State, e.Status.Progress.RunsDone)
		}
		others[k]++
	}
	if len(evs.Items) != sealedEvaluations || ready != sealedEvaluations {
		return false, fmt.Sprintf("%d of %d evaluations %s with %d runs; the others %v", ready, len(evs.Items), state, sealedRuns, others)
	}
	if !sealed {
		return true, ""
	}
	var cms corev1.ConfigMapList
	if err := c.List(context.Background(), &cms, client.InNamespace(ns), client.UnsafeDisableDeepCopy,
		client.MatchingLabels{build.LabelComponent: build.ComponentLedger}); err != nil {
		return false, err.Error()
	}
	n := 0
	for _, cm := range cms.Items {
		if cm.Annotations[build.AnnotationSealed] != "" && cm.Data == nil {
			n++
		}
	}
	return n == sealedEvaluations && len(cms.Items) == sealedEvaluations, fmt.Sprintf("%d of %d ledgers sealed", n, len(cms.Items))
}

// playFullLedgers plays the Deployment controller (servers become ready),
// the runners' ledger sidecars (each ledger gets a full ledger of records
// once its runner Job exists)
// and, once finish is set, the Job controller (a Job whose ledger is
// written completes), until ctx ends.
func playFullLedgers(ctx context.Context, c client.Client, ns string, finish *atomic.Bool) {
	readied, written, finished := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for ctx.Err() == nil {
		readyServers(ctx, c, ns, readied)
		// Only a runner writes a ledger: a ledger full before its Job
		// exists would make the model Done without one.
		js := &metav1.PartialObjectMetadataList{}
		js.SetGroupVersionKind(batchv1.SchemeGroupVersion.WithKind("JobList"))
		if err := c.List(ctx, js, client.InNamespace(ns)); err != nil {
			js.Items = nil
		}
		jobs := map[string]bool{}
		for _, j := range js.Items {
			jobs[j.Name] = true
		}
		writeLedgers(ctx, c, ns, written, func(cm metav1.PartialObjectMetadata) (string, bool) {
			eval, model := cm.Labels[build.LabelEvaluation], cm.Labels[build.LabelModel]
			if !jobs[build.RunnerJobName(eval, model)] {
				return "", false
			}
			return fullLedger(eval, model), true
		})
		if finish.Load() {
			for _, j := range js.Items {
				l := j.Labels
				if finished[j.Name] || !written[build.LedgerName(l[build.LabelEvaluation], l[build.LabelModel], 0)] {
					continue
				}
				if err := completeJob(ctx, c, ns, j.Name); err == nil {
					finished[j.Name] = true
				} else {
					fmt.Fprintf(os.Stderr, "complete Job %s: %v\n", j.Name, err)
				}
			}
		}
		playPause(ctx)
	}
}

// jobStates counts the Jobs by suspension and completion, as stored.
func jobStates(c client.Client, ns string) string {
	var js batchv1.JobList
	if err := c.List(context.Background(), &js, client.InNamespace(ns)); err != nil {
		return err.Error()
	}
	states := map[string]int{}
	for _, j := range js.Items {
		k := fmt.Sprintf("suspend=%t", ptr.Deref(j.Spec.Suspend, false))
		for _, cond := range j.Status.Conditions {
			k += " " + string(cond.Type) + "=" + string(cond.Status)
		}
		states[k]++
	}
	return fmt.Sprintf("jobs %v", states)
}

// completeJob plays the Job controller: every index succeeded.
func completeJob(ctx context.Context, c client.Client, ns, name string) error {
	var j batchv1.Job
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &j); err != nil {
		return err
	}
	n := ptr.Deref(j.Spec.Completions, 1)
	now := metav1.Now()
	start := metav1.NewTime(now.Add(-time.Minute))
	j.Status.StartTime, j.Status.CompletionTime, j.Status.Succeeded = &start, &now, n
	j.Status.Ready, j.Status.Terminating = ptr.To[int32](0), ptr.To[int32](0)
	j.Status.UncountedTerminatedPods = &batchv1.UncountedTerminatedPods{}
	j.Status.CompletedIndexes = "0"
	if n > 1 {
		j.Status.CompletedIndexes = fmt.Sprintf("0-%d", n-1)
	}
	j.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, Reason: "CompletionsReached", LastTransitionTime: now, LastProbeTime: now},
	}
	return c.Status().Update(ctx, &j)
}

// fullLedger is a full ledger of one evaluation's model: every problem of
// the default suite by every default method, each record sealedRecordBytes
// long with its newline (the problem id is padded to that length).
func fullLedger(eval, model string) string {
	var sb strings.Builder
	sb.Grow(sealedRuns * sealedRecordBytes)
	methods := repotv1.DefaultMethods()
	for k := range sealedRuns {
		r := contract.Record{
			Model: model, ProblemID: fmt.Sprintf("%s/p%03d/", eval, k/len(methods)), Environment: "tower_of_hanoi", Complexity: 3 + k%5,
			Method: string(methods[k%len(methods)]), Success: k%3 != 0, StoppedReason: "goal",
			Route: contract.RouteInitialSuccess, Calls: 1, PromptTokens: 800 + k, CompletionTokens: 1200 + k,
			InitialPlanLen: 7, InitialPrefixPermille: 1000, InitialSuccess: true, WallMillis: int64(1000 + k),
			StartedUnixMilli: 1_780_000_000_000 + int64(k)*1000, InFlightLimit: 8,
		}
		line, _ := json.Marshal(r)
		r.ProblemID += strings.Repeat("x", max(0, sealedRecordBytes-1-len(line)))
		line, _ = json.Marshal(r)
		sb.Write(line)
		sb.WriteByte('\n')
	}
	if sb.Len() > contract.MaxLedgerBytes {
		panic("the benchmark's ledger is over contract.MaxLedgerBytes: " + strconv.Itoa(sb.Len()))
	}
	return sb.String()
}
