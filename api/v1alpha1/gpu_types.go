package v1alpha1

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SimulatedGPUs are the GPUs `repot sim-server --fake-gpu` can simulate.
var SimulatedGPUs = []string{"h100"}

// ModelGPUStatus is a model's GPU cost, measured through NVML inside the
// server container (or SIMULATED for simulated models with fakeGPU). The
// runners read the server's telemetry at the start and the end of their
// shards; the figures cover the time from the first start reading to the
// last end reading of each server lifetime.
type ModelGPUStatus struct {
	// simulated is true when the readings come from a simulated GPU
	// (spec.models[].simulated.fakeGPU): they are not a measurement of any
	// hardware.
	// +optional
	Simulated bool `json:"simulated,omitempty"`

	// readings is the number of telemetry readings the runners recorded.
	// +optional
	Readings int32 `json:"readings,omitempty"`

	// gpuSecondsMeasured is the GPU count times the seconds the server
	// container had run at its last reading, summed over server restarts:
	// the GPU-seconds held as the telemetry saw them (status.models[].
	// gpuSecondsHeld counts from the lifecycle times instead).
	// +optional
	GPUSecondsMeasured int64 `json:"gpuSecondsMeasured,omitempty"`

	// measuredSeconds is the time covered by the readings (first start to
	// last end reading, summed over server restarts).
	// +optional
	MeasuredSeconds int64 `json:"measuredSeconds,omitempty"`

	// energyJoules is the energy all the server's GPUs used over
	// measuredSeconds, from the driver's total-energy counter (deltas,
	// counter resets handled; integrated from power where a GPU has no
	// counter).
	// +optional
	EnergyJoules int64 `json:"energyJoules,omitempty"`

	// meanUtilizationPermille is the mean GPU utilisation over the same
	// time and GPUs, in thousandths (NVML's share of time a kernel ran).
	// +optional
	MeanUtilizationPermille *int32 `json:"meanUtilizationPermille,omitempty"`

	// peakMemoryMiB is the most memory in use on any one of the server's
	// GPUs while it ran (vLLM reserves gpuMemoryUtilization of it at start).
	// +optional
	PeakMemoryMiB int64 `json:"peakMemoryMiB,omitempty"`

	// joulesPerSolvedProblem is energyJoules over the problems solved by
	// all methods together (a problem solved by two methods counts twice);
	// unset while nothing is solved.
	// +optional
	JoulesPerSolvedProblem *int64 `json:"joulesPerSolvedProblem,omitempty"`

	// completionTokensPerKilojoule is the completion tokens of all methods
	// per kilojoule (1000 = one token per joule); unset while no energy is
	// measured.
	// +optional
	CompletionTokensPerKilojoule *int64 `json:"completionTokensPerKilojoule,omitempty"`

	// xidErrors counts the critical XID events of the server's GPUs while
	// they were measured, where the driver delivers XID events.
	// +optional
	XIDErrors int64 `json:"xidErrors,omitempty"`

	// eccUncorrectedErrors is the volatile uncorrected (double-bit) ECC
	// error count of the server's GPUs, where ECC is on.
	// +optional
	ECCUncorrectedErrors int64 `json:"eccUncorrectedErrors,omitempty"`

	// conditions has GPUHealthy: False with reason GPUErrors when a GPU was
	// lost or reported XID or uncorrected ECC errors, False with reason
	// TelemetryUnavailable when NVML could not read the GPUs, True
	// otherwise.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=4
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// ConditionGPUHealthy is the condition type of status.models[].gpu.
const ConditionGPUHealthy = "GPUHealthy"

// Reasons of GPUHealthy.
const (
	ReasonGPUErrors            = "GPUErrors"
	ReasonTelemetryUnavailable = "TelemetryUnavailable"
	ReasonNoGPUErrors          = "NoGPUErrors"
)

// GPUMemoryUtilizationArg is gpuMemoryUtilizationPermille as vLLM's
// --gpu-memory-utilization fraction, e.g. 900 -> "0.9", 1000 -> "1".
func GPUMemoryUtilizationArg(permille int32) string {
	if permille >= 1000 {
		return "1"
	}
	s := strconv.Itoa(int(1000 + permille))[1:] // zero-padded to three digits
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return "0." + s
}
