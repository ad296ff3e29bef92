package integration_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// Scale of the benchmark: evaluations x simulated models, each model with
// the default 4 shards, and records written per ledger.
var (
	benchEvaluations = envInt("REPOT_BENCH_EVALUATIONS", 100)
	benchModels      = 4
	benchShards      = 4
	benchRecords     = 10
)

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkHundredEvaluations creates 100 evaluations of 4 simulated models
// against the real API server and measures the time until every child
// exists (servers, ledgers, runner Jobs) and every status aggregates the
// ledgers the benchmark writes as runners would; the p50 and p99 reconcile
// durations; and the peak heap (and peak RSS) of the process that runs the
// manager.
//
//	go test ./controllers/integration/ -run '^$' -bench HundredEvaluations -benchtime 1x
func BenchmarkHundredEvaluations(b *testing.B) {
	runBenchmark(b, "repot-bench-manager", benchOnce)
}

// runBenchmark starts a control plane for b (skipping it when bin/ lacks
// one), binds the shipped manager role under roleName, and runs iteration
// b.N times with the admin's config and the manager's.
func runBenchmark(b *testing.B, roleName string, iteration func(b *testing.B, cfg, asManager *rest.Config, iter int)) {
	root, err := repoRoot()
	if err != nil {
		b.Fatal(err)
	}
	if why := framework.BinariesMissing(root); why != "" {
		b.Skip(why)
	}
	env, cfg, err := startControlPlane(root)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = env.Teardown() }()
	asManager, err := env.ConfigAsShippedManager(context.Background(), roleName)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		iteration(b, cfg, asManager, i)
	}
}

// reconcileTimes collects the duration of every reconcile, with the
// requests it made to the API server.
type reconcileTimes struct {
	mu     sync.Mutex
	d      []time.Duration
	passes []*passRequests
}

func (t *reconcileTimes) wrap(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		pr := &passRequests{}
		start := time.Now()
		res, err := r.Reconcile(context.WithValue(ctx, passKey{}, pr), req)
		t.mu.Lock()
		t.d = append(t.d, time.Since(start))
		t.passes = append(t.passes, pr)
		t.mu.Unlock()
		return res, err
	})
}

// slowest describes the n slowest reconciles.
func (t *reconcileTimes) slowest(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	idx := make([]int, len(t.d))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return t.d[idx[a]] > t.d[idx[b]] })
	var sb strings.Builder
	for _, i := range idx[:min(n, len(idx))] {
		fmt.Fprintf(&sb, "%6.1f ms: %s\n", float64(t.d[i].Microseconds())/1000, t.passes[i])
	}
	return sb.String()
}

func (t *reconcileTimes) quantile(q float64) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), t.d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// benchOnce runs one iteration: the admin (cfg) plays the users and the
// cluster, the manager runs as asManager (the shipped RBAC).
func benchOnce(b *testing.B, cfg, asManager *rest.Config, iter int) {
	c, err := newClient(cfg)
	if err != nil {
		b.Fatal(err)
	}
	bg := context.Background()
	ns := fmt.Sprintf("bench-%d-%d", iter, time.Now().UnixNano()%100000)
	if err := c.Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		b.Fatal(err)
	}
	times := &reconcileTimes{}
	requests := &requestCounter{}
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	m, err := startManagerWrapped("", requests.wrap(asManager), nil, nil, nil, times.wrap)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = m.Stop() }()

	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var peakHeap uint64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); samplePeakHeap(ctx, &peakHeap) }()
	go func() { defer wg.Done(); playCluster(ctx, c, ns) }()

	b.ResetTimer()
	start := time.Now()
	for i := range benchEvaluations {
		w := revtesting.MakeEvaluation(fmt.Sprintf("ev%03d", i), ns).Shards(int32(benchShards))
		for j := range benchModels {
			w = w.Simulated(fmt.Sprintf("m%d", j), "strong", int64(j))
		}
		if err := c.Create(bg, w.Obj()); err != nil {
			b.Fatal(err)
		}
	}
	created := time.Since(start)
	want := int32(benchModels * benchShards * benchRecords)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		done, err := converged(m.GetCache(), ns, want)
		if err != nil {
			b.Fatal(err)
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("not converged after 3 minutes: %s", describeProgress(c, ns))
		}
		// The poll reads the manager's cache, which holds what the API
		// server stores: the benchmark adds no load of its own to it.
		time.Sleep(100 * time.Millisecond)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	wg.Wait()

	times.mu.Lock()
	n := len(times.d)
	times.mu.Unlock()
	b.ReportMetric(elapsed.Seconds(), "s-converge")
	b.ReportMetric(created.Seconds(), "s-create")
	b.ReportMetric(float64(n), "reconciles")
	b.ReportMetric(float64(times.quantile(0.5).Microseconds())/1000, "ms-reconcile-p50")
	b.ReportMetric(float64(times.quantile(0.99).Microseconds())/1000, "ms-reconcile-p99")
	b.ReportMetric(float64(requests.writes())/float64(benchEvaluations), "writes/evaluation")
	b.ReportMetric(evaluationKiB(c, ns), "KiB/evaluation")
	// Printed, not logged: a benchmark's log keeps only its first lines.
	fmt.Fprintf(os.Stderr, "the manager's requests to the API server (count, mean and max latency):\n%s", requests.table())
	fmt.Fprintf(os.Stderr, "the slowest 1%% of reconciles and their requests:\n%s", times.slowest(n/100))
	b.ReportMetric(float64(peakHeap)/(1<<20), "MiB-peak-heap")
	b.ReportMetric(float64(peakHeap-min(peakHeap, base.HeapInuse))/(1<<20), "MiB-heap-growth")
	if hwm := vmHWM(); hwm > 0 {
		b.ReportMetric(float64(hwm)/(1<<20), "MiB-peak-rss")
	}
}

// converged reports whether every evaluation's children exist and its
// status counts every record of its ledgers.
func converged(c client.Reader, ns string, want int32) (bool, error) {
	var evs repotv1.RepotEvaluationList
	// Read only: no copy of the cached objects, which would make the
	// benchmark's process collect garbage for the poll, not the operator.
	if err := c.List(context.Background(), &evs, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	var jobs batchv1.JobList
	if err := c.List(context.Background(), &jobs, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return false, err
	}
	if len(evs.Items) != benchEvaluations || len(jobs.Items) != benchEvaluations*benchModels {
		return false, nil
	}
	for _, e := range evs.Items {
		p := e.Status.Progress
		if p == nil || p.RunsDone != want || e.Status.Summary == nil || e.Status.Summary.State != repotv1.StateRunning {
			return false, nil
		}
	}
	return true, nil
}

// evaluationKiB is the mean size of the stored evaluations as JSON,
// managedFields included: every status write and watch event carries it.
func evaluationKiB(c client.Client, ns string) float64 {
	var evs repotv1.RepotEvaluationList
	if err := c.List(context.Background(), &evs, client.InNamespace(ns)); err != nil || len(evs.Items) == 0 {
		return 0
	}
	total := 0
	for i := range evs.Items {
		b, _ := json.Marshal(&evs.Items[i])
		total += len(b)
	}
	return float64(total) / float64(len(evs.Items)) / 1024
}

// describeProgress summarises the evaluations' states for a failure message.
func describeProgress(c client.Client, ns string) string {
	var evs repotv1.RepotEvaluationList
	var jobs batchv1.JobList
	_ = c.List(context.Background(), &evs, client.InNamespace(ns))
	_ = c.List(context.Background(), &jobs, client.InNamespace(ns))
	states := map[string]int{}
	for _, e := range evs.Items {
		k := "no-status"
		if e.Status.Summary != nil && e.Status.Progress != nil {
			k = fmt.Sprintf("%s/%s", e.Status.Summary.State, e.Status.Progress.Text)
		}
		states[k]++
	}
	return fmt.Sprintf("%d evaluations, %d jobs, states %v", len(evs.Items), len(jobs.Items), states)
}

// playCluster plays the Deployment controller (servers become ready) and
// the runners' ledger sidecars (each ledger gets its records) until ctx ends.
// It lists metadata only and writes by patch, so that the benchmark's own
// load on the API server stays small next to the operator's.
func playCluster(ctx context.Context, c client.Client, ns string) {
	readied, written := map[string]bool{}, map[string]bool{}
	for ctx.Err() == nil {
		readyServers(ctx, c, ns, readied)
		writeLedgers(ctx, c, ns, written, func(cm metav1.PartialObjectMetadata) (string, bool) {
			return ledgerText(cm.Labels[build.LabelModel], cm.Labels[build.LabelShard]), true
		})
		playPause(ctx)
	}
}

// readyServers plays the Deployment controller once: each server
// Deployment not in readied yet gets a ready status, and is added.
func readyServers(ctx context.Context, c client.Client, ns string, readied map[string]bool) {
	ds := &metav1.PartialObjectMetadataList{}
	ds.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("DeploymentList"))
	if err := c.List(ctx, ds, client.InNamespace(ns)); err != nil {
		return
	}
	for _, d := range ds.Items {
		if readied[d.Name] {
			continue
		}
		patch := fmt.Sprintf(`{"status":{"replicas":1,"updatedReplicas":1,"readyReplicas":1,"availableReplicas":1,"observedGeneration":%d}}`, d.Generation)
		dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: d.Name}}
		if c.Status().Patch(ctx, dep, client.RawPatch(types.MergePatchType, []byte(patch))) == nil {
			readied[d.Name] = true
		}
	}
}

// writeLedgers plays the runners' ledger sidecars once: each ledger not in
// written yet for which records answers ok gets those records, and is
// added.
func writeLedgers(ctx context.Context, c client.Client, ns string, written map[string]bool, records func(metav1.PartialObjectMetadata) (string, bool)) {
	cms := &metav1.PartialObjectMetadataList{}
	cms.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := c.List(ctx, cms, client.InNamespace(ns), client.MatchingLabels{build.LabelComponent: build.ComponentLedger}); err != nil {
		return
	}
	for _, cm := range cms.Items {
		if written[cm.Name] {
			continue
		}
		text, ok := records(cm)
		if !ok {
			continue
		}
		data, _ := json.Marshal(map[string]any{"data": map[string]string{contract.LedgerRecordsKey: text}})
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm.Name}}
		if c.Patch(ctx, obj, client.RawPatch(types.MergePatchType, data)) == nil {
			written[cm.Name] = true
		}
	}
}

// playPause is the players' 200ms between rounds, cut short when ctx ends.
func playPause(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(200 * time.Millisecond):
	}
}

func ledgerText(model, shard string) string {
	var sb strings.Builder
	for k := range benchRecords {
		r := contract.Record{
			Model: model, ProblemID: "p" + shard + "-" + strconv.Itoa(k), Environment: "tower_of_hanoi", Complexity: 3 + k%5,
			Method: []string{"pot", "pot-retry", "repot", "repot-adaptive"}[k%4], Success: k%3 != 0, StoppedReason: "goal",
			Route: contract.RouteInitialSuccess, Calls: 1, PromptTokens: 800, CompletionTokens: 1200,
		}
		line, _ := json.Marshal(r)
		sb.Write(line)
		sb.WriteByte('\n')
	}
	return sb.String()
}

// samplePeakHeap records the largest in-use heap seen until ctx ends.
func samplePeakHeap(ctx context.Context, peak *uint64) {
	var ms runtime.MemStats
	for {
		runtime.ReadMemStats(&ms)
		if ms.HeapInuse > *peak {
			*peak = ms.HeapInuse
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// vmHWM is the process's peak resident set size (Linux), or 0.
func vmHWM() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb * 1024
		}
	}
	return 0
}
