package controllers

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
	"repot.dev/repot-operator/controllers/planning"
)

// setupKueue makes the reconciler Kueue-aware when the API server serves
// Kueue's Workload API: it indexes and watches the Workloads the
// evaluations own. Without Kueue it leaves the builder as it is.
func setupKueue(ctx context.Context, mgr ctrl.Manager, r *EvaluationReconciler, b *builder.Builder) (*builder.Builder, error) {
	ok, err := KueueInstalled(mgr.GetRESTMapper())
	if err != nil {
		return nil, fmt.Errorf("looking for Kueue: %w", err)
	}
	if !ok {
		return b, nil
	}
	if err := mgr.GetFieldIndexer().IndexField(ctx, &kueue.Workload{}, build.OwnerKey, func(o client.Object) []string {
		if uid := build.ControllerUID(o); uid != "" {
			return []string{uid}
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("index workloads by owner: %w", err)
	}
	r.queue = NewKueueQueue(mgr.GetClient(), r.opts.Clock.Now)
	return b.Owns(&kueue.Workload{}), nil
}

// observeKueue reads the evaluation's Workloads when it is queued, and
// says which models Kueue lets have children (world.Admitted).
func (r *EvaluationReconciler) observeKueue(ctx context.Context, e *repotv1.RepotEvaluation, w *planning.World) error {
	if kueueadapter.QueueName(e) == "" {
		return nil
	}
	if r.queue == nil {
		w.KueueMissing = true
	} else {
		qw, err := r.queue.Observe(ctx, e)
		if err != nil {
			return err
		}
		w.Kueue = qw
	}
	w.Admitted = planning.AdmittedModels(e, w)
	return nil
}

// applyQueue carries out the plan's Workload actions. A Workload whose
// creation finds its name taken is read from the API server, as a child's
// is (nameTaken): if e controls it, the cache was behind; otherwise it is
// returned in taken, never adopted, and the status says so
// (ChildNameTaken) instead of the model waiting, silently, on an
// admission that is not its own.
func (r *EvaluationReconciler) applyQueue(ctx context.Context, e *repotv1.RepotEvaluation, ops []kueueadapter.QueueOp) (taken []planning.TakenName, _ error) {
	for _, op := range ops {
		var err error
		switch op.Kind {
		case kueueadapter.QueueSubmit:
			err = r.queue.Submit(ctx, op.Workload)
			if apierrors.IsAlreadyExists(err) {
				var t *planning.TakenName
				t, err = r.nameTaken(ctx, e, op.Workload)
				if t != nil {
					taken = append(taken, *t)
				}
			}
		case kueueadapter.QueueRequeue:
			err = r.queue.Requeue(ctx, op.Workload)
		case kueueadapter.QueueFinish:
			err = r.queue.Finish(ctx, op.Workload, op.Message)
		case kueueadapter.QueueDelete:
			err = r.queue.Delete(ctx, op.Workload)
		case kueueadapter.QueuePodsReady:
			err = r.queue.SetPodsReady(ctx, op.Workload, *op.Condition)
		}
		if err != nil {
			return taken, err
		}
	}
	return taken, nil
}
