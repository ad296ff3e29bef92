package v1alpha1

// Defaults the API server applies (through the CRD schema); the getters below
// apply them too, so that code reading an object that did not pass through an
// API server (unit tests, fakes) sees the same values.
const (
	DefaultSuite               = SuiteOpenSource120
	DefaultRepairBudget        = 1
	DefaultShortPrefixPermille = 150
	DefaultTemperature         = "0"
	DefaultMaxTokens           = 16384
	DefaultShardsPerModel      = 4
	DefaultInFlightPerShard    = 64
	DefaultGPUs                = 1
	DefaultVLLMImage           = "vllm/vllm-openai:v0.11.0@sha256:014a95f21c9edf6abe0aea6b07353f96baa4ec291c427bb1176dc7c93a85845c"
	DefaultProblemsKey         = "problems.jsonl"
	DefaultSecretKey           = "token"
	DefaultSelfConsistencyK    = 8
	DefaultVEXMaxLLMCalls      = 12
)

// DefaultMethods are the methods run when spec.methods is empty.
func DefaultMethods() []Method {
	return []Method{MethodPoT, MethodPoTRetry, MethodRePoT, MethodAdaptive}
}

// SuiteOrDefault returns spec.suite or its default.
func (s *RepotEvaluationSpec) SuiteOrDefault() Suite {
	if s.Suite == "" {
		return DefaultSuite
	}
	return s.Suite
}

// MethodsOrDefault returns spec.methods or the default four; for suite
// derail-550 it returns the Derail conditions instead (spec.methods is
// ignored there), so that every count of runs is conditions x cases.
func (s *RepotEvaluationSpec) MethodsOrDefault() []Method {
	if s.IsDerail() {
		out := make([]Method, 0, 7)
		for _, c := range s.DerailConditionsOrDefault() {
			out = append(out, Method(c))
		}
		return out
	}
	if len(s.Methods) == 0 {
		return DefaultMethods()
	}
	return s.Methods
}

// RepairBudgetOrDefault returns spec.repairBudget or 1.
func (s *RepotEvaluationSpec) RepairBudgetOrDefault() int32 {
	return deref(s.RepairBudget, DefaultRepairBudget)
}

// ShortPrefixPermilleOrDefault returns spec.adaptive.shortPrefixPermille or 150.
func (s *RepotEvaluationSpec) ShortPrefixPermilleOrDefault() int32 {
	if s.Adaptive == nil {
		return DefaultShortPrefixPermille
	}
	return deref(s.Adaptive.ShortPrefixPermille, DefaultShortPrefixPermille)
}

// SelfConsistencySamplesOrDefault returns spec.selfConsistency.samples or 8.
func (s *RepotEvaluationSpec) SelfConsistencySamplesOrDefault() int32 {
	if s.SelfConsistency == nil {
		return DefaultSelfConsistencyK
	}
	return deref(s.SelfConsistency.Samples, DefaultSelfConsistencyK)
}

// VEXMaxLLMCallsOrDefault returns spec.vex.maxLLMCalls or 12.
func (s *RepotEvaluationSpec) VEXMaxLLMCallsOrDefault() int32 {
	if s.VEX == nil {
		return DefaultVEXMaxLLMCalls
	}
	return deref(s.VEX.MaxLLMCalls, DefaultVEXMaxLLMCalls)
}

// TemperatureOrDefault returns spec.sampling.temperature or "0".
func (s *RepotEvaluationSpec) TemperatureOrDefault() string {
	if s.Sampling == nil || s.Sampling.Temperature == "" {
		return DefaultTemperature
	}
	return s.Sampling.Temperature
}

// MaxTokensOrDefault returns spec.sampling.maxTokens or 16384.
func (s *RepotEvaluationSpec) MaxTokensOrDefault() int32 {
	if s.Sampling == nil {
		return DefaultMaxTokens
	}
	return deref(s.Sampling.MaxTokens, DefaultMaxTokens)
}

// DisableThinkingFor returns whether thinking is off for model m: the model's
// own setting, else spec.sampling.disableThinking, else true.
func (s *RepotEvaluationSpec) DisableThinkingFor(m *ModelSpec) bool {
	if m != nil && m.DisableThinking != nil {
		return *m.DisableThinking
	}
	if s.Sampling == nil {
		return true
	}
	return deref(s.Sampling.DisableThinking, true)
}

// ShardsPerModelOrDefault returns spec.runner.shardsPerModel or 4.
func (s *RepotEvaluationSpec) ShardsPerModelOrDefault() int32 {
	if s.Runner == nil {
		return DefaultShardsPerModel
	}
	return deref(s.Runner.ShardsPerModel, DefaultShardsPerModel)
}

// InFlightPerShardOrDefault returns spec.runner.inFlightPerShard or 64.
func (s *RepotEvaluationSpec) InFlightPerShardOrDefault() int32 {
	if s.Runner == nil {
		return DefaultInFlightPerShard
	}
	return deref(s.Runner.InFlightPerShard, DefaultInFlightPerShard)
}

// IsSuspended reports whether spec.suspend is true.
func (s *RepotEvaluationSpec) IsSuspended() bool { return deref(s.Suspend, false) }

// GPUsOrDefault returns vllm.gpus or 1.
func (v *VLLMModel) GPUsOrDefault() int32 { return deref(v.GPUs, DefaultGPUs) }

// GPUProductOrDefault returns vllm.gpuProduct or the H100 product label.
func (v *VLLMModel) GPUProductOrDefault() string {
	if v.GPUProduct == "" {
		return DefaultGPUProduct
	}
	return v.GPUProduct
}

// ImageOrDefault returns vllm.image or the default vLLM image.
func (v *VLLMModel) ImageOrDefault() string {
	if v.Image == "" {
		return DefaultVLLMImage
	}
	return v.Image
}

// KeyOrDefault returns the ConfigMap key or "problems.jsonl".
func (c *ConfigMapKey) KeyOrDefault() string {
	if c.Key == "" {
		return DefaultProblemsKey
	}
	return c.Key
}

// KeyOrDefault returns the Secret key or "token".
func (s *SecretKey) KeyOrDefault() string {
	if s.Key == "" {
		return DefaultSecretKey
	}
	return s.Key
}

// ModelKind names which of vllm, endpoint or simulated a model is.
type ModelKind string

// Model kinds.
const (
	ModelKindVLLM      ModelKind = "vllm"
	ModelKindEndpoint  ModelKind = "endpoint"
	ModelKindSimulated ModelKind = "simulated"
)

// Kind returns the model's kind, or "" when none (or several) is set.
func (m *ModelSpec) Kind() ModelKind {
	var k ModelKind
	n := 0
	if m.VLLM != nil {
		k, n = ModelKindVLLM, n+1
	}
	if m.Endpoint != nil {
		k, n = ModelKindEndpoint, n+1
	}
	if m.Simulated != nil {
		k, n = ModelKindSimulated, n+1
	}
	if n != 1 {
		return ""
	}
	return k
}

func deref[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}
