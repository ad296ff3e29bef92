package testing

// FakeGPU gives the last simulated model a SIMULATED GPU (e.g. "h100").
func (w *EvaluationWrapper) FakeGPU(gpu string) *EvaluationWrapper {
	if m := w.last(); m != nil && m.Simulated != nil {
		m.Simulated.FakeGPU = gpu
	}
	return w
}

// ServedModelName sets servedModelName of the last vLLM model.
func (w *EvaluationWrapper) ServedModelName(name string) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.ServedModelName = name
	}
	return w
}

// MaxModelLen sets maxModelLen of the last vLLM model.
func (w *EvaluationWrapper) MaxModelLen(n int32) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.MaxModelLen = &n
	}
	return w
}

// GPUMemoryUtilizationPermille sets gpuMemoryUtilizationPermille of the last
// vLLM model.
func (w *EvaluationWrapper) GPUMemoryUtilizationPermille(p int32) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.GPUMemoryUtilizationPermille = &p
	}
	return w
}

// PodMonitor sets podMonitor of the last vLLM model.
func (w *EvaluationWrapper) PodMonitor(b bool) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.PodMonitor = b
	}
	return w
}
