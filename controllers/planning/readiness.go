package planning

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// serverView is what the controller concluded about one model's server.
type serverView struct {
	Model    string
	State    repotv1.ServerState
	Ready    bool
	Endpoint string
	// Reason and Message explain a Stalled or Starting server.
	Reason, Message string
	// RecheckAfter asks for another look when a probe budget will run out.
	RecheckAfter time.Duration
}

// observeServers reads each model's server from the world, in spec order.
// ended means the evaluation finished; servers are then being deleted.
func observeServers(e *repotv1.RepotEvaluation, w *World, o build.Options, ended bool, models []modelState) []serverView {
	out := make([]serverView, 0, len(e.Spec.Models))
	for i := range e.Spec.Models {
		v := observeServer(e, &e.Spec.Models[i], w, o, ended || models[i].Done)
		if models[i].OverBudget && !ended && !models[i].Done {
			// Stopped by spec.budget: its server is deleted (or gone).
			v = serverView{Model: v.Model, Endpoint: v.Endpoint, State: repotv1.ServerStopped, Reason: repotv1.ReasonBudgetExhausted,
				Message: "spec.budget stopped the model; raise or remove the limit to resume it"}
		}
		out = append(out, v)
	}
	return out
}

// observeServer reads one model's server; stopped means the evaluation
// ended or the model is Done, and its server is being deleted.
func observeServer(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, w *World, o build.Options, stopped bool) serverView {
	v := serverView{Model: m.Name, Endpoint: build.WithoutCredentials(build.ServerURL(e, m))}
	if !build.HasServer(m) {
		v.State, v.Ready = repotv1.ServerExternal, true
		return v
	}
	d := w.deployment(build.ServerName(e.Name, m.Name))
	switch {
	case stopped:
		v.State = repotv1.ServerStopped
		return v
	case d == nil:
		v.State = repotv1.ServerPending
		if e.Spec.IsSuspended() {
			v.State = repotv1.ServerStopped
		}
		return v
	case e.Spec.IsSuspended():
		v.State = repotv1.ServerStopped
		return v
	case d.Annotations[build.AnnotationReleased] != "":
		reason, msg, _ := strings.Cut(d.Annotations[build.AnnotationReleased], ": ")
		v.State, v.Reason = repotv1.ServerStalled, reason
		v.Message = Truncate(fmt.Sprintf("server of model %s scaled to zero to release its GPUs: the model could not make progress for spec.stalledAfterSeconds (%ds); its ledgers stay: fix the cause, then suspend and resume the evaluation to start it again. The cause: %s",
			m.Name, e.Spec.StalledAfterSecondsOrDefault(), msg), 1024)
		return v
	case d.Spec.Replicas != nil && *d.Spec.Replicas == 0:
		v.State = repotv1.ServerStopped
		return v
	case d.Status.ReadyReplicas > 0:
		v.State, v.Ready = repotv1.ServerReady, true
		return v
	}
	if c := deploymentCondition(d, appsv1.DeploymentReplicaFailure); c != nil && c.Status == corev1.ConditionTrue {
		// The API server refuses the server's pods: nothing else runs, so
		// nothing else can be diagnosed. A stall at once (its release clock
		// starts, planStall); the ReplicaSet retries, so fixing the cause
		// before the release lets the model go on by itself.
		v.State, v.Reason = repotv1.ServerStalled, repotv1.ReasonServerPodsRefused
		v.Message = Truncate(fmt.Sprintf("the API server refuses the pods of model %s's server (Deployment %s, %s): %s. Fix what refuses them (a ResourceQuota or LimitRange of the namespace, Pod Security admission, a webhook): its ReplicaSet keeps retrying and the model goes on once a pod is created; still refused after spec.stalledAfterSeconds (%ds), the server is released",
			m.Name, d.Name, c.Reason, c.Message, e.Spec.StalledAfterSecondsOrDefault()), 1024)
		return v
	}
	stalledAfter := time.Duration(e.Spec.StalledAfterSecondsOrDefault()) * time.Second
	diag := diagnoseServer(m.Name, w.serverPods(e.Name, m.Name), w.Now, build.ServerReadyBudget(m, o), stalledAfter)
	v.RecheckAfter = diag.RecheckAfter
	if diag.Waiting {
		v.State, v.Reason, v.Message = repotv1.ServerStarting, diag.Cause, Truncate(diag.Message, 1024)
		return v
	}
	if diag.Cause != "" {
		v.State, v.Reason, v.Message = repotv1.ServerStalled, diag.Cause, Truncate(diag.Message, 1024)
		return v
	}
	v.State = repotv1.ServerStarting
	return v
}

// deploymentCondition is d's condition of type t, or nil.
func deploymentCondition(d *appsv1.Deployment, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range d.Status.Conditions {
		if d.Status.Conditions[i].Type == t {
			return &d.Status.Conditions[i]
		}
	}
	return nil
}
