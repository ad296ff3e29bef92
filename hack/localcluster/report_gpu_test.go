package main

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

func TestPrintGPU(t *testing.T) {
	m := repotv1.ModelStatus{Name: "sim-strong", GPUSecondsHeld: 319,
		Methods: []repotv1.MethodResult{
			{Method: repotv1.MethodPoT, EstimatedEnergyJoules: ptr.To[int64](13929), EstimatedJoulesPerSolvedProblem: ptr.To[int64](211)},
			{Method: repotv1.MethodPoTRetry, EstimatedEnergyJoules: ptr.To[int64](0)},
		},
		GPU: &repotv1.ModelGPUStatus{Simulated: true, GPUSecondsMeasured: 310, EnergyJoules: 75543, MeasuredSeconds: 314, MeanUtilizationPermille: ptr.To[int32](876),
			PeakMemoryMiB: 73728, JoulesPerSolvedProblem: ptr.To[int64](252), CompletionTokensPerKilojoule: ptr.To[int64](2810),
			Conditions: []metav1.Condition{{Type: repotv1.ConditionGPUHealthy, Status: metav1.ConditionFalse, Reason: repotv1.ReasonGPUErrors, Message: "GPU 0 is lost"}}},
	}
	var b bytes.Buffer
	printGPU(&b, &m)
	out := b.String()
	for _, want := range []string{
		"GPU [SIMULATED GPU: not a measurement of any hardware]: 319 GPU-seconds held (310 seen by the telemetry), 75543 J over 314s measured, mean utilisation 87.6%, peak memory 73728 MiB, 252 J per solved problem, 2810 completion tokens per kJ",
		"GPUHealthy False: GPUErrors: GPU 0 is lost",
		"EST. J/SOLVED [SIMULATED GPU",
		"pot        13929          211",
		"pot-retry  0              -",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	b.Reset()
	printGPU(&b, &repotv1.ModelStatus{Name: "x"})
	if b.Len() != 0 {
		t.Errorf("a model without GPU status printed %q", b.String())
	}
}
