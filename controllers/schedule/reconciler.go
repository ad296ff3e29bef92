// Package schedule runs RepotSchedules: a RepotEvaluation per scheduled
// time (cron, as batch/v1 CronJob), a short history of the runs, and the
// comparison of each finished run with the previous successful one to flag
// regressions.
package schedule

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/planning"
)

// Labels of the evaluation controller's ledger ConfigMaps (the same values
// as controllers.LabelEvaluation and controllers.ComponentLedger; this
// package does not import the evaluation controller).
const (
	labelEvaluation = "repot.dev/evaluation"
	labelComponent  = "repot.dev/component"
	componentLedger = "ledger"
)

// OwnerKey indexes RepotEvaluations by the name of the RepotSchedule that
// controls them.
const ownerKey = ".metadata.controller.repotschedule"

// Options configure the schedule controller.
type Options struct {
	// Clock is the time source of every schedule decision. Tests inject a
	// fake one. Default: the real clock.
	Clock clock.PassiveClock
}

// Reconciler runs RepotSchedules.
type Reconciler struct {
	client client.Client
	// ledgers reads a finished run's ledgers from the API server, not the
	// cache: a comparison is computed once and kept as history, and the
	// cache may not yet hold the last records the runners confirmed.
	ledgers  client.Reader
	recorder events.EventRecorder
	clock    clock.PassiveClock
}

// RBAC: runs are created and deleted (history limits, Replace); ledgers are
// read for the comparisons.
//
// +kubebuilder:rbac:groups=repot.dev,resources=repotschedules,verbs=get;list;watch
// +kubebuilder:rbac:groups=repot.dev,resources=repotschedules/status,verbs=get;patch
// +kubebuilder:rbac:groups=repot.dev,resources=repotschedules/finalizers,verbs=update
// +kubebuilder:rbac:groups=repot.dev,resources=repotevaluations,verbs=get;list;watch;create;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the owner index and the schedule controller.
func SetupWithManager(ctx context.Context, mgr ctrl.Manager, opts Options) error {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &repotv1.RepotEvaluation{}, ownerKey, func(o client.Object) []string {
		if ref := metav1.GetControllerOf(o); ref != nil && ref.Kind == "RepotSchedule" && ref.APIVersion == repotv1.GroupVersion.String() {
			return []string{ref.Name}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("index RepotEvaluations by schedule: %w", err)
	}
	registerMetrics()
	r := &Reconciler{client: mgr.GetClient(), ledgers: mgr.GetAPIReader(), recorder: mgr.GetEventRecorder("repot-operator"), clock: opts.Clock}
	return ctrl.NewControllerManagedBy(mgr).
		Named("repotschedule").
		For(&repotv1.RepotSchedule{}).
		Owns(&repotv1.RepotEvaluation{}).
		Complete(r)
}

// Reconcile brings one schedule up to date: it records finished runs (with
// their comparison), prunes old ones, starts the run that is due and asks to
// be called again when the next one is.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// 1. Fetch the schedule.
	var s repotv1.RepotSchedule
	if err := r.client.Get(ctx, req.NamespacedName, &s); err != nil {
		if apierrors.IsNotFound(err) {
			forgetMetrics(req.Namespace, req.Name)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if s.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	// 2. Observe its runs through the owner index.
	var list repotv1.RepotEvaluationList
	if err := r.client.List(ctx, &list, client.InNamespace(s.Namespace), client.MatchingFields{ownerKey: s.Name}); err != nil {
		return ctrl.Result{}, err
	}
	runs := observeRuns(list.Items)
	// 3. Compare newly finished successful runs with their baselines.
	cmps, err := r.compareNew(ctx, &s, runs)
	if err != nil {
		return ctrl.Result{}, err
	}
	// 4. Decide (pure).
	now := r.clock.Now()
	p := planSchedule(&s, runs, cmps, now)
	// 5. Act: delete, then create. A run the API server rejects stalls the
	//    schedule with the reason; other errors requeue.
	for _, e := range p.Delete {
		if err := r.client.Delete(ctx, e, client.Preconditions{UID: &e.UID},
			client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("delete run %s: %w", e.Name, err)
		}
	}
	if p.Create != nil {
		err := r.client.Create(ctx, p.Create)
		switch {
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			markRejected(&p, err)
		case err != nil && !apierrors.IsAlreadyExists(err):
			return ctrl.Result{}, fmt.Errorf("create run %s: %w", p.Create.Name, err)
		}
	}
	// 6. Write the status once, then emit events and metrics.
	if !equality.Semantic.DeepEqual(s.Status, p.Status) {
		u := s.DeepCopy()
		u.Status = p.Status
		// A merge patch, as the evaluation controller writes its status:
		// this controller is the status's only writer, so the pass need
		// not hold the latest resourceVersion (no conflict retries).
		if err := r.client.Status().Patch(ctx, u, client.MergeFrom(&s)); err != nil {
			return ctrl.Result{}, fmt.Errorf("write status: %w", err)
		}
	}
	for _, ev := range p.Events {
		typ := corev1.EventTypeNormal
		if ev.Warning {
			typ = corev1.EventTypeWarning
		}
		r.recorder.Eventf(&s, nil, typ, ev.Reason, "Schedule", "%s", ev.Message)
	}
	observeMetrics(&s, p.Status)
	return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
}

// markRejected stalls the schedule when the API server rejects the run built
// from the template: retrying cannot help until the template changes.
func markRejected(p *plan, err error) {
	msg := fmt.Sprintf("the API server rejected run %s built from spec.evaluationTemplate: %v; fix the template", p.Create.Name, err)
	active := p.Status.Active
	p.Status.Active = nil
	for _, a := range active {
		if a.Name != p.Create.Name {
			p.Status.Active = append(p.Status.Active, a)
		}
	}
	p.Status.ActiveCount = int32(len(p.Status.Active))
	for i := range p.Status.Conditions {
		c := &p.Status.Conditions[i]
		switch c.Type {
		case repotv1.ConditionReady, repotv1.ConditionStalled:
			c.Status = metav1.ConditionFalse
			if c.Type == repotv1.ConditionStalled {
				c.Status = metav1.ConditionTrue
			}
			c.Reason, c.Message = repotv1.ReasonRunRejected, msg
		}
	}
	p.Events = append(p.Events, event{Warning: true, Reason: repotv1.ReasonRunRejected, Message: msg})
}

// compareNew compares every successful run not yet in the history with the
// previous successful run (the newest Complete run scheduled before it), on
// the records of both runs' ledgers.
func (r *Reconciler) compareNew(ctx context.Context, s *repotv1.RepotSchedule, runs []run) (map[string]comparison, error) {
	known := map[string]bool{}
	for _, h := range s.Status.History {
		known[h.Name] = true
	}
	out := map[string]comparison{}
	for i, cur := range runs {
		if cur.Result != repotv1.RunComplete || known[cur.Eval.Name] {
			continue
		}
		var base *run
		for j := i - 1; j >= 0; j-- {
			if runs[j].Result == repotv1.RunComplete {
				base = &runs[j]
				break
			}
		}
		if base == nil {
			continue
		}
		recs, err := r.records(ctx, cur.Eval)
		if err != nil {
			return nil, err
		}
		baseRecs, err := r.records(ctx, base.Eval)
		if err != nil {
			return nil, err
		}
		out[cur.Eval.Name] = comparison{Baseline: base.Eval.Name, Comparisons: compareRuns(cur.Eval, recs, baseRecs, regressionPValue(s)),
			Differences: provenanceDifferences(cur.Eval, base.Eval)}
	}
	return out, nil
}

// records reads a run's ledgers from the API server. Unreadable lines are skipped (and logged):
// the evaluation controller reports them on the run itself.
func (r *Reconciler) records(ctx context.Context, e *repotv1.RepotEvaluation) ([]contract.Record, error) {
	var cms corev1.ConfigMapList
	if err := r.ledgers.List(ctx, &cms, client.InNamespace(e.Namespace),
		client.MatchingLabels{labelEvaluation: e.Name, labelComponent: componentLedger}); err != nil {
		return nil, fmt.Errorf("list ledgers of %s: %w", e.Name, err)
	}
	return runRecords(e, cms.Items, func(ledger string, line int, err error) {
		log.FromContext(ctx).Info("skipping an unreadable ledger line", "ledger", ledger, "line", line, "error", err.Error())
	}), nil
}

// runRecords are the records of the ledgers among cms that e controls and
// expects by name (planning.ExpectedLedgers, as the evaluation controller
// reads them: a runner may move another evaluation's ledger under e by its
// owner reference and labels, but cannot rename it). skip is told of each
// unreadable line.
func runRecords(e *repotv1.RepotEvaluation, cms []corev1.ConfigMap, skip func(ledger string, line int, err error)) []contract.Record {
	var owned []corev1.ConfigMap
	for _, cm := range cms {
		if ref := metav1.GetControllerOf(&cm); ref != nil && ref.UID == e.UID {
			owned = append(owned, cm)
		}
	}
	expected, _ := planning.ExpectedLedgers(e, owned)
	var out []contract.Record
	for _, cm := range expected {
		contract.ScanRecords(cm.Data[contract.LedgerRecordsKey], func(n int, _ string, rec contract.Record, err error) {
			if err != nil {
				skip(cm.Name, n, err)
				return
			}
			out = append(out, rec)
		})
	}
	return out
}
