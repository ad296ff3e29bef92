// Package testing builds RepotEvaluation objects for tests with a fluent
// wrapper:
//
//	ev := testing.MakeEvaluation("demo", "ns").
//		Simulated("sim-strong", "strong", 1).
//		Simulated("sim-weak", "weak", 2).
//		Shards(2).Obj()
//
// Import it under another name (e.g. revtesting) next to the standard
// library's testing package.
package testing

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "repot.dev/repot-operator/api/v1alpha1"
)

// EvaluationWrapper wraps a RepotEvaluation under construction.
type EvaluationWrapper struct{ v1alpha1.RepotEvaluation }

// MakeEvaluation starts a RepotEvaluation named name in namespace ns with an
// empty spec (no models; add at least one before creating it).
func MakeEvaluation(name, ns string) *EvaluationWrapper {
	return &EvaluationWrapper{v1alpha1.RepotEvaluation{
		TypeMeta: metav1.TypeMeta{
			APIVersion: v1alpha1.GroupVersion.String(),
			Kind:       "RepotEvaluation",
		},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
	}}
}

// Obj returns a pointer to the built object (a deep copy, so the wrapper can
// be reused).
func (w *EvaluationWrapper) Obj() *v1alpha1.RepotEvaluation { return w.DeepCopy() }

// Simulated adds a simulated model with a profile and seed.
func (w *EvaluationWrapper) Simulated(name, profile string, seed int64) *EvaluationWrapper {
	w.Spec.Models = append(w.Spec.Models, v1alpha1.ModelSpec{
		Name:      name,
		Simulated: &v1alpha1.SimulatedModel{Profile: profile, Seed: &seed},
	})
	return w
}

// FaultPermille sets faultPermille of the last simulated model.
func (w *EvaluationWrapper) FaultPermille(p int32) *EvaluationWrapper {
	if m := w.last(); m != nil && m.Simulated != nil {
		m.Simulated.FaultPermille = &p
	}
	return w
}

// Endpoint adds an endpoint model.
func (w *EvaluationWrapper) Endpoint(name, url, servedModel string) *EvaluationWrapper {
	w.Spec.Models = append(w.Spec.Models, v1alpha1.ModelSpec{
		Name:     name,
		Endpoint: &v1alpha1.EndpointModel{URL: url, ServedModelName: servedModel},
	})
	return w
}

// APIKeySecret sets the API key Secret of the last endpoint model.
func (w *EvaluationWrapper) APIKeySecret(secret, key string) *EvaluationWrapper {
	if m := w.last(); m != nil && m.Endpoint != nil {
		m.Endpoint.APIKeySecret = &v1alpha1.SecretKey{Name: secret, Key: key}
	}
	return w
}

// VLLM adds a vLLM model serving the given Hugging Face model id.
func (w *EvaluationWrapper) VLLM(name, model string) *EvaluationWrapper {
	w.Spec.Models = append(w.Spec.Models, v1alpha1.ModelSpec{
		Name: name,
		VLLM: &v1alpha1.VLLMModel{Model: model},
	})
	return w
}

// VLLMWith adds a fully specified vLLM model.
func (w *EvaluationWrapper) VLLMWith(name string, v v1alpha1.VLLMModel) *EvaluationWrapper {
	w.Spec.Models = append(w.Spec.Models, v1alpha1.ModelSpec{Name: name, VLLM: &v})
	return w
}

// GPUs sets the GPU count of the last vLLM model.
func (w *EvaluationWrapper) GPUs(n int32) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.GPUs = &n
	}
	return w
}

// GPUProduct sets the GPU product label of the last vLLM model.
func (w *EvaluationWrapper) GPUProduct(p string) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.GPUProduct = p
	}
	return w
}

// NodeLabel adds a node selector entry to the last vLLM model.
func (w *EvaluationWrapper) NodeLabel(key, value string) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.NodeSelector = append(m.VLLM.NodeSelector, v1alpha1.NodeLabel{Key: key, Value: value})
	}
	return w
}

// Toleration adds a toleration to the last vLLM model.
func (w *EvaluationWrapper) Toleration(t corev1.Toleration) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.Tolerations = append(m.VLLM.Tolerations, t)
	}
	return w
}

// ModelCachePVC sets the model cache PVC of the last vLLM model.
func (w *EvaluationWrapper) ModelCachePVC(name string) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.ModelCachePVC = name
	}
	return w
}

// HFTokenSecret sets the HF token Secret of the last vLLM model.
func (w *EvaluationWrapper) HFTokenSecret(secret, key string) *EvaluationWrapper {
	if m := w.last(); m != nil && m.VLLM != nil {
		m.VLLM.HFTokenSecret = &v1alpha1.SecretKey{Name: secret, Key: key}
	}
	return w
}

// Model adds a model as given (for invalid combinations in tests).
func (w *EvaluationWrapper) Model(m v1alpha1.ModelSpec) *EvaluationWrapper {
	w.Spec.Models = append(w.Spec.Models, m)
	return w
}

// Suite sets spec.suite.
func (w *EvaluationWrapper) Suite(s v1alpha1.Suite) *EvaluationWrapper {
	w.Spec.Suite = s
	return w
}

// ProblemsConfigMap reads problems from a ConfigMap key.
func (w *EvaluationWrapper) ProblemsConfigMap(name, key string) *EvaluationWrapper {
	w.Spec.Problems = &v1alpha1.ProblemSource{ConfigMap: &v1alpha1.ConfigMapKey{Name: name, Key: key}}
	return w
}

// ProblemsURL reads problems from a URL.
func (w *EvaluationWrapper) ProblemsURL(url string) *EvaluationWrapper {
	w.Spec.Problems = &v1alpha1.ProblemSource{URL: url}
	return w
}

// Methods sets spec.methods.
func (w *EvaluationWrapper) Methods(ms ...v1alpha1.Method) *EvaluationWrapper {
	w.Spec.Methods = ms
	return w
}

// RepairBudget sets spec.repairBudget.
func (w *EvaluationWrapper) RepairBudget(n int32) *EvaluationWrapper {
	w.Spec.RepairBudget = &n
	return w
}

// VRR sets spec.vrr.
func (w *EvaluationWrapper) VRR(v v1alpha1.VRRSpec) *EvaluationWrapper {
	w.Spec.VRR = &v
	return w
}

// SelfConsistencySamples sets spec.selfConsistency.samples.
func (w *EvaluationWrapper) SelfConsistencySamples(k int32) *EvaluationWrapper {
	w.Spec.SelfConsistency = &v1alpha1.SelfConsistencySpec{Samples: &k}
	return w
}

// VEX sets spec.vex.
func (w *EvaluationWrapper) VEX(v v1alpha1.VEXSpec) *EvaluationWrapper {
	w.Spec.VEX = &v
	return w
}

// ShortPrefixPermille sets spec.adaptive.shortPrefixPermille.
func (w *EvaluationWrapper) ShortPrefixPermille(p int32) *EvaluationWrapper {
	if w.Spec.Adaptive == nil {
		w.Spec.Adaptive = &v1alpha1.AdaptiveSpec{}
	}
	w.Spec.Adaptive.ShortPrefixPermille = &p
	return w
}

// Temperature sets spec.sampling.temperature.
func (w *EvaluationWrapper) Temperature(t string) *EvaluationWrapper {
	w.sampling().Temperature = t
	return w
}

// MaxTokens sets spec.sampling.maxTokens.
func (w *EvaluationWrapper) MaxTokens(n int32) *EvaluationWrapper {
	w.sampling().MaxTokens = &n
	return w
}

// DisableThinking sets spec.sampling.disableThinking.
func (w *EvaluationWrapper) DisableThinking(b bool) *EvaluationWrapper {
	w.sampling().DisableThinking = &b
	return w
}

// Shards sets spec.runner.shardsPerModel.
func (w *EvaluationWrapper) Shards(n int32) *EvaluationWrapper {
	w.runner().ShardsPerModel = &n
	return w
}

// InFlight sets spec.runner.inFlightPerShard.
func (w *EvaluationWrapper) InFlight(n int32) *EvaluationWrapper {
	w.runner().InFlightPerShard = &n
	return w
}

// RunnerImage sets spec.runner.image.
func (w *EvaluationWrapper) RunnerImage(image string) *EvaluationWrapper {
	w.runner().Image = image
	return w
}

// RuntimeClass sets spec.runner.runtimeClassName.
func (w *EvaluationWrapper) RuntimeClass(name string) *EvaluationWrapper {
	w.runner().RuntimeClassName = &name
	return w
}

// ArtifactsPVC sets spec.artifacts.pvcName.
func (w *EvaluationWrapper) ArtifactsPVC(name string) *EvaluationWrapper {
	w.Spec.Artifacts = &v1alpha1.ArtifactsSpec{PVCName: name}
	return w
}

// ArtifactsS3 sets spec.artifacts.s3.
func (w *EvaluationWrapper) ArtifactsS3(s v1alpha1.S3Store) *EvaluationWrapper {
	w.Spec.Artifacts = &v1alpha1.ArtifactsSpec{S3: &s}
	return w
}

// RetainAfterDeletion sets spec.artifacts.retainAfterDeletion (after
// ArtifactsS3).
func (w *EvaluationWrapper) RetainAfterDeletion(b bool) *EvaluationWrapper {
	w.Spec.Artifacts.RetainAfterDeletion = &b
	return w
}

// Suspend sets spec.suspend.
func (w *EvaluationWrapper) Suspend(b bool) *EvaluationWrapper {
	w.Spec.Suspend = &b
	return w
}

// ActiveDeadline sets spec.activeDeadlineSeconds.
func (w *EvaluationWrapper) ActiveDeadline(s int64) *EvaluationWrapper {
	w.Spec.ActiveDeadlineSeconds = &s
	return w
}

// TTL sets spec.ttlSecondsAfterFinished.
func (w *EvaluationWrapper) TTL(s int32) *EvaluationWrapper {
	w.Spec.TTLSecondsAfterFinished = &s
	return w
}

// Label sets a label.
func (w *EvaluationWrapper) Label(k, v string) *EvaluationWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

func (w *EvaluationWrapper) last() *v1alpha1.ModelSpec {
	if len(w.Spec.Models) == 0 {
		return nil
	}
	return &w.Spec.Models[len(w.Spec.Models)-1]
}

func (w *EvaluationWrapper) sampling() *v1alpha1.SamplingSpec {
	if w.Spec.Sampling == nil {
		w.Spec.Sampling = &v1alpha1.SamplingSpec{}
	}
	return w.Spec.Sampling
}

func (w *EvaluationWrapper) runner() *v1alpha1.RunnerSpec {
	if w.Spec.Runner == nil {
		w.Spec.Runner = &v1alpha1.RunnerSpec{}
	}
	return w.Spec.Runner
}
