package planning

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func gpuLedger(t *testing.T, model string, rs ...contract.Reading) corev1.ConfigMap {
	t.Helper()
	var b strings.Builder
	for _, r := range rs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	b.WriteString("not a reading\n")
	return corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "l-" + model, Labels: map[string]string{build.LabelModel: model}},
		Data: map[string]string{contract.LedgerReadingsKey: b.String()}}
}

func TestModelGPUCost(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).FakeGPU("h100").Simulated("other", "weak", 2).FakeGPU("h100").Obj()
	ev.Generation = 3
	now := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	g := func(mj, util, sampled uint64) contract.GPUTotals {
		return contract.GPUTotals{UUID: "GPU-0", EnergyMillijoules: mj, UtilPercentMillis: util, SampledMillis: sampled, PeakMemoryBytes: 70 << 30}
	}
	ledgers := []corev1.ConfigMap{
		gpuLedger(t, "m",
			contract.Reading{Instance: "a", Simulated: true, UptimeMillis: 10_000, GPUs: []contract.GPUTotals{g(1_000_000, 0, 9_000)}},
			contract.Reading{Instance: "a", Simulated: true, UptimeMillis: 110_000, GPUs: []contract.GPUTotals{g(41_000_000, 6_000_000, 109_000)}}),
		gpuLedger(t, "other", contract.Reading{Instance: "b", UptimeMillis: 5, GPUs: []contract.GPUTotals{g(1, 0, 0)}}),
	}
	methods := []repotv1.MethodResult{
		{Method: repotv1.MethodPoT, Solved: 20, CompletionTokens: 10_000},
		{Method: repotv1.MethodRePoT, Solved: 30, CompletionTokens: 30_000},
		{Method: repotv1.MethodPoTRetry, Solved: 0, CompletionTokens: 0},
	}
	st := modelGPUCost(ev, &ev.Spec.Models[0], ledgers, methods, nil, now)
	want := &repotv1.ModelGPUStatus{
		Simulated: true, Readings: 2, GPUSecondsMeasured: 110, MeasuredSeconds: 100, EnergyJoules: 40_000, MeanUtilizationPermille: ptr.To[int32](600),
		PeakMemoryMiB: 70 << 10, JoulesPerSolvedProblem: ptr.To[int64](800), CompletionTokensPerKilojoule: ptr.To[int64](1000),
		Conditions: []metav1.Condition{{Type: repotv1.ConditionGPUHealthy, Status: metav1.ConditionTrue, ObservedGeneration: 3,
			LastTransitionTime: now, Reason: repotv1.ReasonNoGPUErrors,
			Message: "SIMULATED GPU: 2 readings, no GPU lost and no XID or uncorrected ECC error reported"}},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("GPU status (-want +got):\n%s", diff)
	}
	gotMethods := [][2]*int64{}
	for _, m := range methods {
		gotMethods = append(gotMethods, [2]*int64{m.EstimatedEnergyJoules, m.EstimatedJoulesPerSolvedProblem})
	}
	wantMethods := [][2]*int64{{ptr.To[int64](10_000), ptr.To[int64](500)}, {ptr.To[int64](30_000), ptr.To[int64](1000)}, {ptr.To[int64](0), nil}}
	if diff := cmp.Diff(wantMethods, gotMethods); diff != "" {
		t.Errorf("method estimates (-want +got):\n%s", diff)
	}

	// A lost GPU turns GPUHealthy false; the transition time moves.
	later := metav1.NewTime(now.Add(time.Minute))
	lost := append(ledgers, gpuLedger(t, "m", contract.Reading{Instance: "a", UptimeMillis: 120_000,
		GPUs: []contract.GPUTotals{{UUID: "GPU-0", EnergyMillijoules: 41_000_000, Error: "GPU 0 is lost (NVML_ERROR_GPU_IS_LOST reading its memory)"}}}))
	st2 := modelGPUCost(ev, &ev.Spec.Models[0], lost, methods, st, later)
	c := st2.Conditions[0]
	if c.Status != metav1.ConditionFalse || c.Reason != repotv1.ReasonGPUErrors || !strings.Contains(c.Message, "is lost") || !c.LastTransitionTime.Equal(&later) {
		t.Errorf("condition after a lost GPU: %+v", c)
	}

	// No telemetry: nothing.
	plain := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	if s := modelGPUCost(plain, &plain.Spec.Models[0], ledgers, methods, nil, now); s != nil {
		t.Errorf("a model without telemetry has GPU status %v", s)
	}
}
