package planning

import (
	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// The spec can change until status.startTime is written, and again while
// the start is undone (a child rejected before anything ran). The planner
// therefore reconciles every child against the current spec, not only
// those of spec.models: the servers and runner Jobs of a model no longer in
// spec.models are deleted, and the runner Role and NetworkPolicies, which
// depend on the model set, are brought back to what the builders make of
// the spec (ensureRole, ensureNetworkPolicy in plan.go).

// deleteRemovedModels deletes the servers, runner Jobs and ledgers whose
// model is no longer in spec.models (planKueue finishes their Workloads
// once nothing of them is left, see removedWorkloads). A model can leave
// spec.models only before anything ran (the spec is immutable once
// started), so its ledgers hold nothing the status counted.
func (p *Plan) deleteRemovedModels(e *repotv1.RepotEvaluation, w *World) {
	servers, jobs, models := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for i := range e.Spec.Models {
		servers[build.ServerName(e.Name, e.Spec.Models[i].Name)] = true
		jobs[build.RunnerJobName(e.Name, e.Spec.Models[i].Name)] = true
		models[e.Spec.Models[i].Name] = true
	}
	for i := range w.Ledgers {
		if cm := &w.Ledgers[i]; !models[cm.Labels[build.LabelModel]] && cm.DeletionTimestamp == nil {
			p.Delete = append(p.Delete, cm.DeepCopy())
		}
	}
	for i := range w.StrayLedgers {
		if cm := &w.StrayLedgers[i]; cm.DeletionTimestamp == nil {
			p.Delete = append(p.Delete, cm.DeepCopy())
		}
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
