package controllers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
	"repot.dev/repot-operator/controllers/planning"
)

// EvaluationReconciler runs RepotEvaluations: model servers, runner Jobs,
// ledgers, and a status recomputed from them on every pass.
type EvaluationReconciler struct {
	client    client.Client
	apiReader client.Reader
	recorder  events.EventRecorder
	opts      build.Options
	ledgers   *planning.RecordCache
	// pending are this reconciler's writes the cache has not shown yet.
	pending *pendingWrites
	metrics *evaluationMetrics
	// queue is Kueue, when the cluster serves it (setupKueue).
	queue kueueadapter.Queue
	// apiServer names the API server's addresses when opts has none
	// (--apiserver-cidrs unset); nil: none.
	apiServer APIServerAddresses
}

// planOptions are the options of one pass: opts, with the API server's
// addresses from apiServer when --apiserver-cidrs named none. A failed
// read leaves them empty (the runner policy then has no API server rule,
// and the evaluation gets the Warning event APIServerUnknown).
func (r *EvaluationReconciler) planOptions(ctx context.Context) build.Options {
	o := r.opts
	if len(o.APIServerCIDRs) != 0 || r.apiServer == nil {
		return o
	}
	addrs, err := r.apiServer.Addresses(ctx)
	if err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "the API server's addresses are unknown; the runner NetworkPolicy allows no API server address (set --apiserver-cidrs)")
		return o
	}
	o.APIServerCIDRs = addrs
	return o
}

// RBAC, least privilege: children are created (and servers deleted, Jobs
// suspended, Deployments scaled, the runner Role and the NetworkPolicies
// brought back to what the spec builds, also after a spec edit before the
// start) but never patched; owner references and the garbage collector
// delete the rest. configmaps carries patch because the runner Role the
// operator creates grants it (RBAC forbids
// granting what one does not hold), and because the operator merge-patches
// the annotations of ledgers (sealing, budget caps). Leases are in the
// namespaced leader election Role. repotevaluations/finalizers: update is
// what the OwnerReferencesPermissionEnforcement admission plugin asks of
// whoever sets blockOwnerDeletion on a child (OpenShift and hardened
// clusters enable it). repotevaluations: patch adds and removes the one
// finalizer the operator writes (build.FinalizerArtifactsCleanup); the
// operator-writes admission policy lets it change nothing else there.
//
// +kubebuilder:rbac:groups=repot.dev,resources=repotevaluations,verbs=get;list;watch;patch;delete
// +kubebuilder:rbac:groups=repot.dev,resources=repotevaluations/status,verbs=get;patch
// +kubebuilder:rbac:groups=repot.dev,resources=repotevaluations/finalizers,verbs=update
// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups="",resources=services,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=roles,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=rolebindings,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=networking.k8s.io,resources=networkpolicies,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=list

// Reconcile brings one evaluation one step closer to its spec. Each step
// below is small, and a pass reads observe, decide, apply, describe, write:
// the decision (planning.Decide) and the description of its outcome
// (Plan.Describe) are pure functions, each run once, and this method only
// reads the world and carries the decision out. Status is written once, at
// the end, and events only after that write succeeded.
func (r *EvaluationReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// 1. Fetch the evaluation; once it is gone, forget what we cached for it.
	e, err := r.fetch(ctx, req)
	if e == nil || err != nil {
		return ctrl.Result{}, err
	}
	// 2. Being deleted: owner references let the garbage collector remove
	//    every child. An evaluation whose stored traces go with it
	//    (spec.artifacts.retainAfterDeletion false) holds a finalizer,
	//    added before anything of it can upload, until a Job has deleted
	//    them.
	if e.DeletionTimestamp != nil {
		return r.finalize(ctx, e)
	}
	if err := r.syncFinalizer(ctx, e); err != nil {
		return ctrl.Result{}, err
	}
	// 3. Observe: children through the owner index, server pods, ledgers.
	//    Complete is final: before the pass that would first write it
	//    decides, the ledgers are read as the API server holds them, since
	//    the cache may lag the last records (confirmLedgers).
	w, err := r.snapshot(ctx, e)
	if err != nil {
		return ctrl.Result{}, err
	}
	if planning.Completes(e, w) && !isComplete(e) {
		if err := r.confirmLedgers(ctx, e, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	// 4. Decide (pure): the children to create, update and delete, and
	//    the Kueue Workloads' operations.
	p := planning.Decide(e, w, r.planOptions(ctx))
	// 5. Apply. The spec freezes with the first child that costs
	//    something: a decision that creates the first server Deployment or
	//    runner Job records the start first (the CEL rules of the CRD
	//    refuse spec edits once status.startTime is set). If that write
	//    fails, nothing is created and the pass is retried. The runner's
	//    access objects and a queued model's Workload do not start the
	//    evaluation.
	if err := r.recordStart(ctx, e, &p, w.Now); err != nil {
		return ctrl.Result{}, err
	}
	//    Create, update and delete children; an error requeues with backoff,
	//    except a child the API server rejects as invalid: retrying cannot
	//    help. The rejection is described (no child changes; Stalled before
	//    the start, Failed after it, when the spec can no longer change).
	//    A child whose name an object of another owner holds is not
	//    created, and the status says so (ChildNameTaken).
	changed, taken, rejected := r.applyChildren(ctx, e, &p)
	if rejected != nil && !errors.Is(rejected, reconcile.TerminalError(nil)) {
		return ctrl.Result{}, rejected
	}
	//    Then, unless a child was rejected, the Kueue Workloads: create,
	//    hand back an evicted one's quota, mark a done model's finished. A
	//    Workload whose name an object of another owner holds is reported
	//    like a child's (ChildNameTaken).
	if rejected == nil {
		queueTaken, err := r.applyQueue(ctx, e, p.Queue)
		if err != nil {
			return ctrl.Result{}, err
		}
		taken = append(taken, queueTaken...)
	}
	// 6. Describe (pure): the status of the world once what was applied
	//    took effect, its transitions' events, when to look again.
	p.Describe(e, w, planning.Applied{Rejected: rejected, NameTaken: taken})
	// 7. Write the status once, if it changed. A pass whose child changes
	//    took effect leaves it to the pass their watch events bring at once,
	//    which sees them in the cache: one write to the API server per pass,
	//    so passes stay short when a sweep keeps the API server busy. (The
	//    events of step 8 wait with it: they follow the status write.)
	if changed > 0 && rejected == nil && len(taken) == 0 && !p.DeleteEvaluation {
		return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
	}
	if err := r.writeStatus(ctx, e, p.Status); err != nil {
		return ctrl.Result{}, err
	}
	// 8. Announce transitions now that they are recorded.
	r.emit(e, p.Events)
	r.metrics.observe(e, p.Status)
	// A rejection is not retried; only a started evaluation that it failed
	// asks for the pass that deletes its servers.
	if rejected != nil && p.RequeueAfter == 0 {
		return ctrl.Result{}, rejected
	}
	// 9. TTL after finishing: delete the evaluation and, through owner
	//    references, everything it owns.
	if p.DeleteEvaluation {
		return ctrl.Result{}, r.deleteEvaluation(ctx, e)
	}
	return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
}

// isComplete says whether e's stored status already reads Complete.
func isComplete(e *repotv1.RepotEvaluation) bool {
	return e.Status.Summary != nil && e.Status.Summary.State == repotv1.StateComplete
}

func (r *EvaluationReconciler) fetch(ctx context.Context, req ctrl.Request) (*repotv1.RepotEvaluation, error) {
	var e repotv1.RepotEvaluation
	if err := r.client.Get(ctx, req.NamespacedName, &e); err != nil {
		if apierrors.IsNotFound(err) {
			r.ledgers.Forget(req.NamespacedName)
			r.pending.forget(req.NamespacedName)
			r.metrics.forget(req.Namespace, req.Name)
			return nil, nil
		}
		return nil, err
	}
	// An evaluation re-created under the same name: what was remembered of
	// the earlier one is not this one's.
	if r.pending.observe(req.NamespacedName, e.UID) {
		r.ledgers.Forget(req.NamespacedName)
	}
	// The cache may not show this reconciler's last status write yet: plan
	// from the status as the API server holds it (times that are set once,
	// conditions and their transitions), and patch against it.
	e.Status = r.pending.storedStatus(&e, r.opts.Clock.Now())
	return &e, nil
}

// recordStart writes status.startTime alone, before the decision's first
// creations, when the decision starts the evaluation (it creates the first
// server Deployment or runner Job while the stored status has no start:
// Plan.StartsEvaluation). e's status becomes the one written, so the
// pass's status write patches only the rest.
//
// An evaluation Stalled because the API server rejected a child built
// from this very spec (generation) is not started again: the same child
// would be rejected, the start undone, and the spec frozen in between
// for nothing, so that the fix the status asks for could be refused. Its
// passes create the other children unfrozen, and the planner reconciles
// them with whatever spec the fix brings.
func (r *EvaluationReconciler) recordStart(ctx context.Context, e *repotv1.RepotEvaluation, p *planning.Plan, now time.Time) error {
	if e.Status.StartTime != nil || !p.StartsEvaluation() {
		return nil
	}
	if c := apimeta.FindStatusCondition(e.Status.Conditions, repotv1.ConditionStalled); c != nil &&
		c.Status == metav1.ConditionTrue && c.Reason == repotv1.ReasonChildRejected && c.ObservedGeneration == e.Generation {
		return nil
	}
	st := e.Status.DeepCopy()
	start := metav1.NewTime(now)
	st.StartTime = &start
	st.DeadlineStartTime = &start
	if err := r.writeStatus(ctx, e, *st); err != nil {
		return fmt.Errorf("record the start before the first children: %w", err)
	}
	e.Status = *st
	return nil
}

func (r *EvaluationReconciler) writeStatus(ctx context.Context, e *repotv1.RepotEvaluation, st repotv1.RepotEvaluationStatus) error {
	if equality.Semantic.DeepEqual(e.Status, st) {
		return nil
	}
	u := e.DeepCopy()
	u.Status = st
	// A merge patch, not an update: the status is rebuilt from the world on
	// every pass, so the pass need not hold the latest resourceVersion. An
	// update failed with a conflict on one pass in five at sweep scale (the
	// cache had not yet seen the previous pass's write), and each conflict
	// cost a whole pass again. e's status is the one stored (fetch), which
	// may be this reconciler's last write rather than the cache's.
	if err := r.client.Status().Patch(ctx, u, client.MergeFrom(e)); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	r.pending.wroteStatus(planning.NamespacedName(e), st, u.ResourceVersion, r.opts.Clock.Now())
	return nil
}

func (r *EvaluationReconciler) emit(e *repotv1.RepotEvaluation, evs []planning.Event) {
	for _, ev := range evs {
		typ := "Normal"
		if ev.Warning {
			typ = "Warning"
		}
		r.recorder.Eventf(e, nil, typ, ev.Reason, "Reconcile", "%s", ev.Message)
	}
}

func (r *EvaluationReconciler) deleteEvaluation(ctx context.Context, e *repotv1.RepotEvaluation) error {
	log.FromContext(ctx).Info("deleting evaluation: ttlSecondsAfterFinished passed")
	err := r.client.Delete(ctx, e, client.Preconditions{UID: &e.UID},
		client.PropagationPolicy(metav1.DeletePropagationBackground))
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
