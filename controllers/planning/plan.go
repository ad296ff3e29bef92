package planning

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// problemsRecheck is how often an evaluation whose spec.problems cannot be
// read looks again (the ConfigMap is not watched).
const problemsRecheck = 30 * time.Second

// Event is a Kubernetes event to emit once the status is written.
type Event struct {
	Warning bool
	Reason  string
	Message string
}

// Plan is what one reconcile does: the decision (Decide: the children to
// create, update and delete, in that order, creations ordered so that the
// service account, its Role and the ledgers exist before any Job; the
// annotation patches; the Kueue Workload operations) and, once the shell
// applied it, its description (Describe: the new status, the events to emit
// after the status is written, when to look again).
type Plan struct {
	Create []Object
	Update []Object
	Delete []Object
	// Annotate are annotation changes to children that others write too
	// (the ledgers, which the runners' sidecars patch): sent as merge
	// patches of those keys alone, they never conflict with those writes
	// and need only the patch verb.
	Annotate []Annotate
	// Queue are the actions on Kueue Workloads (kueue_admission.go),
	// carried out by the shell after the children.
	Queue []kueueadapter.QueueOp

	Status repotv1.RepotEvaluationStatus
	Events []Event

	// RequeueAfter is set for timed work (deadline, TTL, probe budget).
	RequeueAfter time.Duration
	// DeleteEvaluation is set when the TTL after finishing has passed.
	DeleteEvaluation bool

	// infraRetry are, by model, the infrastructure retries this plan
	// counts (planInfraRetry); its status records them.
	infraRetry map[string]infraRetryCount
	// decided is what Decide worked out of the world and Describe reads.
	decided facts
}

// facts are what Decide read off the evaluation and the world it observed,
// once, for Describe.
type facts struct {
	o      build.Options
	out    outcome
	ended  bool
	res    EvaluationResults
	budget BudgetDecision
	spend  []ModelSpend
	views  []serverView
	store  *repotv1.S3Store
	probe  storeProbe
	// events are the decision's own (planKueue's placement conflicts),
	// emitted after the transition events.
	events []Event
	// placementConflicts are, by model, why a child was not created: its
	// pod template conflicts with the admitted flavors (planKueue).
	placementConflicts map[string]string
	// starts says the decision creates the evaluation's first costly child
	// (a server Deployment or a runner Job) while its status has no start.
	starts bool
}

// Annotate sets Annotations on Object (a child as observed).
type Annotate struct {
	Object      Object
	Annotations map[string]string
}

// Applied is what the shell met when it carried a decision out: it is what
// Describe needs beyond the decision and the world observed.
type Applied struct {
	// Rejected, when set, is the API server's refusal of a child built
	// from the spec in this pass (an Invalid error): retrying the same
	// object cannot succeed, and the planner decides what that means
	// (planRejected). Nothing of the pass is described as applied.
	Rejected error
	// NameTaken are the children (and Kueue Workloads) this pass could not
	// create because an object of the same name exists that this
	// evaluation does not control (planNameTaken).
	NameTaken []TakenName
}

// PlanEvaluation is Decide and Describe for a pass whose changes all take
// effect: the planner's tests step a world with it. The shell decides and
// describes separately (controllers.EvaluationReconciler.Reconcile).
func PlanEvaluation(e *repotv1.RepotEvaluation, w *World, o build.Options) Plan {
	p := Decide(e, w, o)
	p.Describe(e, w, Applied{})
	return p
}

// Decide is the controller's decision for one evaluation and the world it
// observed: the children to create, update, delete and annotate and the
// Kueue Workload operations (with the rechecks those decisions ask for).
// It is a pure function: no client, no clock, no randomness; the same
// inputs always give the same decision. The shell applies it, then calls
// Describe.
func Decide(e *repotv1.RepotEvaluation, w *World, o build.Options) Plan {
	o = o.WithDefaults()
	var p Plan
	var conflicts map[string]string
	out := decideOutcome(e, w)
	ended := out.Phase != phaseActive
	res := w.results(e)
	budget, spend := decideBudget(e, w, res)
	models := decideModels(e, w, res, ended, budget.Stop)
	views := observeServers(e, w, o, ended, models)
	// With an S3 store, nothing that costs starts before a probe with the
	// runners' credentials passed.
	store := build.S3Store(e, o)
	probe := observeStoreProbe(e, w, store)
	switch {
	case ended:
		p.deleteRemovedModels(e, w)
		p.planEnded(e, w, out)
		// An evaluation the TTL deletes now is not sealed first.
		if due, _ := ttlExpiry(e, out, w.Now); !due {
			p.planSeal(e, w)
		}
		conflicts = p.planKueue(e, w, o, models, true)
	case hasStarted(e, w) || !e.Spec.IsSuspended():
		p.planChildren(e, w, o, views, models, diagnoseModelsRunners(e, w, models), store, probe)
		conflicts = p.planKueue(e, w, o, models, false)
		p.planBudgetCaps(e, w, spend, models)
	}
	p.Create = p.Create[:min(len(p.Create), o.CreatesPerPass)]
	p.decided = facts{o: o, out: out, ended: ended, res: res, budget: budget, spend: spend, views: views, store: store, probe: probe,
		events: p.Events, placementConflicts: conflicts,
		starts: e.Status.StartTime == nil && out.Phase == phaseActive && !e.Spec.IsSuspended() && len(p.Create) > 0 && hasCostlyChildren(project(w, &p))}
	return p
}

// StartsEvaluation says the decision creates the evaluation's first child
// that costs something (a server Deployment or a runner Job): the shell
// records the start before it creates anything (the spec freezes then).
func (p *Plan) StartsEvaluation() bool { return p.decided.starts }

// Describe fills in what the decision p, as applied (a), makes of e: the
// status, recomputed from the world once p's changes took effect, the
// events of its transitions, when to look again and whether the TTL
// deletes the evaluation now. A child the API server rejected leaves the
// pass with no child changes (planRejected); children whose names are
// taken were not created (planNameTaken). It is a pure function, like
// Decide, whose facts it reads instead of observing the world again.
func (p *Plan) Describe(e *repotv1.RepotEvaluation, w *World, a Applied) {
	f := p.decided
	if a.Rejected != nil {
		// Nothing of this pass was applied for sure: describe the world as
		// observed and say why it cannot go on.
		*p = Plan{decided: f}
	}
	// A child whose name is taken was not created (planNameTaken).
	p.Create = withoutTaken(p.Create, a.NameTaken)
	after := project(w, p)
	after.NameTaken = mergeTaken(w.NameTaken, a.NameTaken)
	afterModels := decideModels(e, after, f.res, f.ended, f.budget.Stop)
	runners := diagnoseModelsRunners(e, w, afterModels)
	retries := func(m *repotv1.ModelSpec) (int, string) { return p.infraRetries(e, m) }
	afterViews := withPlacementConflicts(observeServers(e, after, f.o, f.ended, afterModels), f.placementConflicts)
	p.Status = buildStatus(e, after, f.out, afterViews, afterModels, f.res, runners, retries)
	p.Status.Budget = budgetStatus(e, f.budget, f.spend, afterModels, &p.Status, f.ended)
	p.Status.Artifacts = artifactsStatus(e, after, f.o, f.out.Phase == phaseComplete)
	budgetConditions(&p.Status, e, w)
	kueueStatus(&p.Status, e, w)
	if f.store != nil {
		artifactsConditions(&p.Status, e, w, f.store, f.probe)
	}
	if a.Rejected != nil {
		p.planRejected(e, w, a.Rejected, w.Now)
		return
	}
	if len(after.NameTaken) > 0 {
		p.planNameTaken(e, after)
	}
	p.Events = transitionEvents(e.Status.Conditions, p.Status.Conditions)
	p.Events = append(p.Events, f.events...)
	p.Events = append(p.Events, apiServerUnknown(e, p.Create, f.o)...)

	due, ttlIn := ttlExpiry(e, f.out, w.Now)
	p.DeleteEvaluation = due
	p.requeueIn(ttlIn)
	p.requeueIn(f.out.DeadlineIn)
	if !f.ended {
		for _, v := range f.views {
			p.requeueIn(v.RecheckAfter)
		}
		for _, d := range runners {
			p.requeueIn(d.RecheckAfter)
		}
		if w.Problems.Unavailable != "" {
			p.requeueIn(problemsRecheck)
		}
		p.requeueIn(f.budget.RecheckAfter)
	}
}

// Completes says the evaluation, as observed, has every run recorded and
// would read Complete: before the pass that first writes it decides, the
// shell reads the ledgers from the API server (its cache may lag the last
// records).
func Completes(e *repotv1.RepotEvaluation, w *World) bool {
	return decideOutcome(e, w).Phase == phaseComplete
}

func (p *Plan) requeueIn(d time.Duration) {
	if d > 0 && (p.RequeueAfter == 0 || d < p.RequeueAfter) {
		p.RequeueAfter = d
	}
}

// planChildren ensures the children of a running (or suspended) evaluation:
// the runner's identity and network policy, and per model as its lifecycle
// state says (decideModels): for an active model its server (scaled to zero
// while suspended) and, once the server is ready, its runner Job and the
// ledgers it writes; for a Done model the deletion of its server; for an
// evicted model the deletion of its server and runners; with an S3 store
// (store, probe), only once the store's probe passed.
func (p *Plan) planChildren(e *repotv1.RepotEvaluation, w *World, o build.Options, views []serverView, models []modelState, runners []runnerDiagnosis, store *repotv1.S3Store, probe storeProbe) {
	suspend := e.Spec.IsSuspended()
	access := build.RunnerAccessName(e.Name)
	if !hasNamed(w.ServiceAccounts, access) {
		p.Create = append(p.Create, build.RunnerServiceAccount(e))
	}
	p.ensureRole(w, build.RunnerRole(e))
	// The API server lets the operator bind only a Role it can read (it
	// checks that the operator holds what the Role grants): the binding
	// waits for the pass that observes the Role.
	if !hasNamed(w.RoleBindings, access) && hasNamed(w.Roles, access) {
		p.Create = append(p.Create, build.RunnerRoleBinding(e))
	}
	p.ensureNetworkPolicy(w, build.RunnerNetworkPolicy(e, o))
	// The servers' NetworkPolicy comes before the servers in the creates
	// (which a pass truncates in order), so no server pod is reachable from
	// outside the evaluation.
	if slices.ContainsFunc(e.Spec.Models, func(m repotv1.ModelSpec) bool { return build.HasServer(&m) }) {
		p.ensureNetworkPolicy(w, build.ServerNetworkPolicy(e, o))
	}
	// A model removed from spec.models before the start leaves nothing
	// running.
	p.deleteRemovedModels(e, w)
	// A runner pod never runs without its identity, its permissions and
	// its network policy in place.
	accessReady := hasNamed(w.ServiceAccounts, access) && hasNamed(w.Roles, access) &&
		hasNamed(w.RoleBindings, access) && hasNamed(w.NetworkPolicies, access)
	p.planArtifactsProbe(e, w, o, store, probe, accessReady)
	if probe.Gated {
		return
	}
	var jobs []Object
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		switch {
		case models[i].Done:
			p.deleteServer(e, m, w)
			continue
		case models[i].Evicted:
			p.evict(e, m, w)
			continue
		case !models[i].Active:
			continue
		}
		if build.HasServer(m) {
			p.planServer(e, m, w, o, suspend, views[i], modelStall(e, w, m, views[i], runners[i]))
		}
		if infraRetryDue(e, w, m, w.results(e)) {
			p.planInfraRetry(e, w, m)
			continue
		}
		// A runner Job whose server was released for a stall is suspended
		// with it: its calls could only end in infrastructure errors.
		j := p.planJob(e, m, w, o, views[i].Ready, suspend || serverReleased(e, w, m))
		if j == nil && w.job(build.RunnerJobName(e.Name, m.Name)) == nil {
			continue
		}
		// The ledgers come when the runner Job is due, not with the
		// server, so that the first pass of a sweep creates only what
		// starts the servers; the Job follows on the pass that observes
		// them.
		ledgersReady := true
		for _, cm := range build.LedgerConfigMaps(e, m) {
			if !w.hasLedger(cm.Name) {
				p.Create = append(p.Create, cm)
				ledgersReady = false
			}
		}
		if j != nil && ledgersReady && accessReady {
			jobs = append(jobs, j)
		}
	}
	p.Create = append(p.Create, jobs...)
}

// ReasonAPIServerUnknown is the Warning event reason when a runner
// NetworkPolicy is written without the API server's addresses.
const ReasonAPIServerUnknown = "APIServerUnknown"

// apiServerUnknown warns, once (with the creation of the runner's
// NetworkPolicy), when that policy allows no API server address because
// neither --apiserver-cidrs nor the kubernetes EndpointSlice named it: the
// policy fails closed, and the runners' ledger containers cannot reach the
// API server to record runs.
func apiServerUnknown(e *repotv1.RepotEvaluation, creates []Object, o build.Options) []Event {
	if len(o.APIServerCIDRs) != 0 {
		return nil
	}
	for _, c := range creates {
		if np, ok := c.(*networkingv1.NetworkPolicy); ok && np.Name == build.RunnerAccessName(e.Name) {
			return []Event{{Warning: true, Reason: ReasonAPIServerUnknown, Message: "the runner NetworkPolicy allows no API server address, so the runners cannot record their runs: " +
				"the API server's addresses are unknown. Set the manager's --apiserver-cidrs (the chart's apiserverCIDRs), or let it get the EndpointSlice default/kubernetes " +
				"(the chart and config/namespaced grant that with a Role in default)"}}
		}
	}
	return nil
}

// ensureRole creates the runner Role, or updates its rules where they
// differ from want (a model added before start, an operator upgrade that
// narrows them).
func (p *Plan) ensureRole(w *World, want *rbacv1.Role) {
	got := byName[rbacv1.Role](w.Roles, want.Name)
	switch {
	case got == nil:
		p.Create = append(p.Create, want)
	case !equality.Semantic.DeepEqual(got.Rules, want.Rules):
		u := got.DeepCopy()
		u.Rules = want.Rules
		p.Update = append(p.Update, u)
	}
}

// ensureNetworkPolicy creates a NetworkPolicy, or updates its spec where it
// differs from want, so that the policy follows the spec and the operator's
// options.
func (p *Plan) ensureNetworkPolicy(w *World, want *networkingv1.NetworkPolicy) {
	got := byName[networkingv1.NetworkPolicy](w.NetworkPolicies, want.Name)
	switch {
	case got == nil:
		p.Create = append(p.Create, want)
	case !equality.Semantic.DeepEqual(got.Spec, want.Spec):
		u := got.DeepCopy()
		u.Spec = want.Spec
		p.Update = append(p.Update, u)
	}
}

// planServer creates or scales a model's server: one replica, or zero while
// suspended so that the GPUs are released, or zero once the model stayed
// stalled for spec.stalledAfterSeconds (see planStall). No server is created
// while the problems cannot be read: it could serve no runner.
func (p *Plan) planServer(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, w *World, o build.Options, suspend bool, view serverView, stall stallCause) {
	name := build.ServerName(e.Name, m.Name)
	if w.service(name) == nil {
		p.Create = append(p.Create, build.ServerService(e, m))
	}
	replicas := int32(1)
	if suspend {
		replicas = 0
	}
	d := w.deployment(name)
	if d == nil {
		if !suspend && w.Problems.Unavailable == "" {
			p.Create = append(p.Create, build.ServerDeployment(e, m, o, replicas))
		}
		return
	}
	u := d.DeepCopy()
	if !suspend {
		p.planStall(e, u, view, stall, w.Now)
		if _, released := u.Annotations[build.AnnotationReleased]; released {
			replicas = 0
		}
	} else {
		// Suspending clears a release: resuming starts the server again.
		delete(u.Annotations, build.AnnotationReleased)
		delete(u.Annotations, build.AnnotationStalledSince)
	}
	if ptr.Deref(u.Spec.Replicas, 1) != replicas {
		u.Spec.Replicas = ptr.To(replicas)
	}
	if !equality.Semantic.DeepEqual(u.Spec.Replicas, d.Spec.Replicas) || !equality.Semantic.DeepEqual(u.Annotations, d.Annotations) {
		p.Update = append(p.Update, u)
	}
}

// serverReleased says whether a model's server was scaled to zero for a
// stall (planStall) and stays so: the evaluation is not suspended.
func serverReleased(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec) bool {
	return modelReleased(e, w, m.Name)
}

// modelReleased is serverReleased by the model's name.
func modelReleased(e *repotv1.RepotEvaluation, w *World, model string) bool {
	d := w.deployment(build.ServerName(e.Name, model))
	return d != nil && d.Annotations[build.AnnotationReleased] != "" && !e.Spec.IsSuspended()
}

// stallCause is why a model with a server cannot make progress, or "" when
// nothing stops it (as far as the operator can see).
type stallCause struct {
	Reason, Message string
}

// modelStall is what stalls a model: its server Stalled; a child on its
// runner path (the runner's identity, its ledgers, its runner Job) whose
// name an object it does not control holds (world.NameTaken, observed
// before the pass); its problems unreadable while no runner Job of it
// exists (a running runner has read them already); or its runner pods
// stuck (an image that cannot be pulled, a pod no node takes, a volume
// that does not mount). Each of these holds a server's GPUs for nothing,
// so each starts the release clock (planStall).
func modelStall(e *repotv1.RepotEvaluation, w *World, m *repotv1.ModelSpec, view serverView, runner runnerDiagnosis) stallCause {
	if view.State == repotv1.ServerStalled {
		return stallCause{view.Reason, view.Message}
	}
	if taken := takenOnRunnerPath(e, w, m); len(taken) > 0 {
		return stallCause{repotv1.ReasonChildNameTaken, nameTakenMessage(taken)}
	}
	switch {
	case w.Problems.Unavailable != "" && w.job(build.RunnerJobName(e.Name, m.Name)) == nil:
		return stallCause{repotv1.ReasonProblemsUnavailable, w.Problems.Unavailable}
	case runner.Cause != "":
		return stallCause{runner.Cause, runner.Message}
	}
	return stallCause{}
}

// planStall keeps the stall annotations of a server Deployment d (a copy
// the caller writes back): the time the model was first seen stalled
// (modelStall), and, once it stayed stalled for spec.stalledAfterSeconds,
// the release that scales the server to zero so that an unattended failure
// holds no GPU. The ledgers stay; suspending and resuming the evaluation
// starts the server again.
func (p *Plan) planStall(e *repotv1.RepotEvaluation, d *appsv1.Deployment, view serverView, stall stallCause, now time.Time) {
	if _, released := d.Annotations[build.AnnotationReleased]; released {
		return
	}
	switch {
	case stall.Reason != "":
	case view.Ready:
		// Only a server that answers, with nothing else stalling its
		// model, ends a stall: a crash-looping server reads Starting
		// between its crashes, and its clock must go on.
		delete(d.Annotations, build.AnnotationStalledSince)
		return
	default:
		return
	}
	after := time.Duration(e.Spec.StalledAfterSecondsOrDefault()) * time.Second
	since, err := time.Parse(time.RFC3339, d.Annotations[build.AnnotationStalledSince])
	if err != nil {
		if d.Annotations == nil {
			d.Annotations = map[string]string{}
		}
		d.Annotations[build.AnnotationStalledSince] = now.UTC().Format(time.RFC3339)
		p.requeueIn(after)
		return
	}
	if left := since.Add(after).Sub(now); left > 0 {
		p.requeueIn(left)
		return
	}
	d.Annotations[build.AnnotationReleased] = Truncate(stall.Reason+": "+stall.Message, 1024)
}

// planJob returns a model's runner Job to create (once its server is ready
// and its problems readable), or records an update of its suspend flag. A
// suspended Job is released only when the evaluation is not suspended and
// the server is ready again; a running Job is not suspended because its
// server blinks.
func (p *Plan) planJob(e *repotv1.RepotEvaluation, m *repotv1.ModelSpec, w *World, o build.Options, ready, suspend bool) *batchv1.Job {
	j := w.job(build.RunnerJobName(e.Name, m.Name))
	if j == nil {
		if suspend || !ready || w.Problems.Unavailable != "" {
			return nil
		}
		return build.RunnerJob(e, m, o, false)
	}
	if jobFinished(j) {
		return nil
	}
	cur := ptr.Deref(j.Spec.Suspend, false)
	want := suspend || (cur && !ready)
	if want != cur {
		u := j.DeepCopy()
		u.Spec.Suspend = ptr.To(want)
		p.Update = append(p.Update, u)
	}
	return nil
}

// planEnded tears down what an ended evaluation no longer needs: its
// servers, and the runners of an evaluation that failed while they ran. The
// ledgers, Jobs and access objects stay until the evaluation is deleted.
func (p *Plan) planEnded(e *repotv1.RepotEvaluation, w *World, out outcome) {
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		p.deleteServer(e, m, w)
		if j := w.job(build.RunnerJobName(e.Name, m.Name)); out.Phase == phaseFailed && j != nil && !jobFinished(j) && !ptr.Deref(j.Spec.Suspend, false) {
			u := j.DeepCopy()
			u.Spec.Suspend = ptr.To(true)
			p.Update = append(p.Update, u)
		}
	}
}
