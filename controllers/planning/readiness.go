package planning

import (
	"fmt"
	"strings"
	"time"

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
