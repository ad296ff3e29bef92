package planning

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// BenchmarkPlanEvaluation measures the pure part of one reconcile (plan,
// projected world, status) for a running 16-model sweep whose ledgers hold
// 480 records per model.
//
//	go test ./controllers/ -run '^$' -bench PlanEvaluation -benchmem
func BenchmarkPlanEvaluation(b *testing.B) {
	w := revtesting.MakeEvaluation("ev", "ns").MaxParallelModels(4)
	for i := range 16 {
		w = w.Simulated(fmt.Sprintf("m%02d", i), "strong", int64(i)).SimulatedGPUs(1)
	}
	e := w.Obj()
	world := newWorld()
	for range 3 {
		step(e, world, t0)
		for _, d := range world.Deployments {
			setServerReady(world, "ev", d.Labels[build.LabelModel], true)
		}
	}
	for i := range 16 {
		m := fmt.Sprintf("m%02d", i)
		for p := range 120 {
			for _, meth := range repotv1.DefaultMethods() {
				world.Records = append(world.Records, contract.Record{Model: m, ProblemID: fmt.Sprint("p", p), Method: string(meth),
					Environment: "tower_of_hanoi", Complexity: 3 + p%5, Success: p%3 != 0, StoppedReason: "goal",
					StartedUnixMilli: t0.Add(time.Duration(p) * time.Second).UnixMilli(), WallMillis: 1500})
			}
		}
		if i >= 4 {
			break // the first four are running; their ledgers fill
		}
	}
	world.ServerPods = []corev1.Pod{}
	world.Now = t0.Add(time.Hour)
	// A ledger changed: the records are aggregated again.
	b.Run("ledger-changed", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			_ = PlanEvaluation(e, world, testOpts)
		}
	})
	// No ledger changed (a server became ready, a Job started): the
	// snapshot hands the memoized results over.
	b.Run("ledgers-unchanged", func(b *testing.B) {
		res := ComputeResults(e, world.Records)
		world.Results = &res
		defer func() { world.Results = nil }()
		b.ReportAllocs()
		for range b.N {
			_ = PlanEvaluation(e, world, testOpts)
		}
	})
}
