package planning

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// ProblemsFromSpec says what is known about the problems without reading
// anything: the size of a named suite, or of planbench-378 and derail-550
// read from a URL. A custom PuzzleZoo-schema URL has an unknown size.
func ProblemsFromSpec(e *repotv1.RepotEvaluation) problemsInfo {
	p := e.Spec.Problems
	if p == nil {
		return problemsInfo{Count: build.SuiteSizes[e.Spec.SuiteOrDefault()]}
	}
	switch e.Spec.SuiteOrDefault() {
	case repotv1.SuitePlanBench378, repotv1.SuiteDerail550:
		return problemsInfo{Count: build.SuiteSizes[e.Spec.SuiteOrDefault()]}
	}
	return problemsInfo{}
}

// ProblemsFromConfigMap counts the problems of spec.problems.configMap (one
// per non-blank JSONL line); cm is nil when the ConfigMap does not exist.
func ProblemsFromConfigMap(ref *repotv1.ConfigMapKey, cm *corev1.ConfigMap) problemsInfo {
	if cm == nil {
		return problemsInfo{Unavailable: fmt.Sprintf("spec.problems.configMap: ConfigMap %q does not exist; create it with the problem JSONL under key %q", ref.Name, ref.KeyOrDefault())}
	}
	text, ok := cm.Data[ref.KeyOrDefault()]
	if !ok {
		return problemsInfo{Unavailable: fmt.Sprintf("spec.problems.configMap: ConfigMap %q has no key %q", ref.Name, ref.KeyOrDefault())}
	}
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	if n == 0 {
		return problemsInfo{Unavailable: fmt.Sprintf("spec.problems.configMap: key %q of ConfigMap %q holds no problems", ref.KeyOrDefault(), ref.Name)}
	}
	return problemsInfo{Count: n, Hash: contentHash(text)}
}
