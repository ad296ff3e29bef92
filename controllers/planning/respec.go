package planning

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// The spec can change until status.startTime is written, and again while
// the start is undone (a child rejected before anything ran). The planner
// therefore reconciles every child against the current spec, not only
// those of spec.models: the servers and runner Jobs of a model no longer in
// spec.models are deleted, and the runner Role and NetworkPolicy, which
// depend on the model set, are updated when what the builders make of the
// spec changed.

// AnnotationSpecHash is the annotation on the runner Role and NetworkPolicy
// that records the hash of what the builders made of the spec when the
// object was last written; a different hash means an update.
const AnnotationSpecHash = "repot.dev/spec-hash"

// specHash is "sha256:<hex>" of v's JSON.
func specHash(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // builders' objects always marshal
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// stamp records hash on obj's annotations.
func stamp(obj Object, hash string) {
	a := obj.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[AnnotationSpecHash] = hash
	obj.SetAnnotations(a)
}

// planRunnerRole creates the runner Role, or updates its rules when the
// spec's ledgers changed since it was written.
func (p *Plan) planRunnerRole(e *repotv1.RepotEvaluation, w *World) {
	want := build.RunnerRole(e)
	h := specHash(want.Rules)
	stamp(want, h)
	have := byName(w.Roles, want.Name)
	switch {
	case have == nil:
		p.Create = append(p.Create, want)
	case have.Annotations[AnnotationSpecHash] != h && have.DeletionTimestamp == nil:
		u := have.DeepCopy()
		u.Rules = want.Rules
		stamp(u, h)
		p.Update = append(p.Update, u)
	}
}

// planRunnerNetworkPolicy creates the runner NetworkPolicy, or updates its
// spec when what the builder makes of the evaluation changed since it was
// written.
func (p *Plan) planRunnerNetworkPolicy(e *repotv1.RepotEvaluation, w *World, o build.Options) {
	want := build.RunnerNetworkPolicy(e, o)
	h := specHash(want.Spec)
	stamp(want, h)
	have := byName(w.NetworkPolicies, want.Name)
	switch {
	case have == nil:
		p.Create = append(p.Create, want)
	case have.Annotations[AnnotationSpecHash] != h && have.DeletionTimestamp == nil:
		u := have.DeepCopy()
		u.Spec = want.Spec
		stamp(u, h)
		p.Update = append(p.Update, u)
	}
}

// deleteRemovedModels deletes the servers and runner Jobs whose model is no
// longer in spec.models. (Their ledgers stay until the evaluation is
// deleted; the status counts only the records of spec.models.)
func (p *Plan) deleteRemovedModels(e *repotv1.RepotEvaluation, w *World) {
	servers, jobs := map[string]bool{}, map[string]bool{}
	for i := range e.Spec.Models {
		servers[build.ServerName(e.Name, e.Spec.Models[i].Name)] = true
		jobs[build.RunnerJobName(e.Name, e.Spec.Models[i].Name)] = true
	}
	for i := range w.Deployments {
		if d := &w.Deployments[i]; !servers[d.Name] && d.DeletionTimestamp == nil {
			p.Delete = append(p.Delete, d.DeepCopy())
		}
	}
	for i := range w.Services {
		if s := &w.Services[i]; !servers[s.Name] && s.DeletionTimestamp == nil && isServer(s) {
			p.Delete = append(p.Delete, s.DeepCopy())
		}
	}
	for i := range w.Jobs {
		if j := &w.Jobs[i]; !jobs[j.Name] && j.DeletionTimestamp == nil {
			p.Delete = append(p.Delete, j.DeepCopy())
		}
	}
}

func isServer(s *corev1.Service) bool {
	return s.Labels[build.LabelComponent] == build.ComponentServer
}
