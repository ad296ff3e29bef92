package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/planning"
)

// createParallelism bounds the concurrent writes of one reconcile; the
// planner's budget (Options.CreatesPerPass) keeps them within it.
const createParallelism = 32

// applyChildren carries out a plan's child changes: deletions first (a
// child already gone is fine), so that a finished model's server releases
// its GPUs before anything new asks for them; then creations, in parallel
// (a child that already exists is fine: the cache was behind); then updates
// (optimistic: a conflict requeues). The planner orders what depends on
// what across passes (a RoleBinding once its Role is observed, a runner Job
// once its ledgers, identity and network policy are), so the creations of
// one pass never depend on each other. The first error ends the pass and
// requeues it. It returns how many of the changes took effect (a child
// that already existed, or was already gone, does not count): each brings
// a watch event, and with it another pass. A creation that finds the name
// taken reads the object in the way: if e controls it, the cache was
// behind; otherwise it is returned in taken (planning.TakenName), never
// adopted.
func (r *EvaluationReconciler) applyChildren(ctx context.Context, e *repotv1.RepotEvaluation, p *planning.Plan) (_ int, taken []planning.TakenName, _ error) {
	var took atomic.Int32
	var mu sync.Mutex
	key := planning.NamespacedName(e)
	if err := r.parallel(ctx, p.Delete, func(ctx context.Context, obj planning.Object) error {
		err := r.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err == nil {
			took.Add(1)
			r.pending.deleted(key, obj, r.opts.Clock.Now())
		}
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
		}
		return nil
	}); err != nil {
		return int(took.Load()), nil, err
	}
	if err := r.parallel(ctx, p.Create, func(ctx context.Context, obj planning.Object) error {
		err := r.client.Create(ctx, obj)
		switch {
		case err == nil:
			took.Add(1)
			r.pending.created(key, obj, r.opts.Clock.Now())
			return nil
		case apierrors.IsAlreadyExists(err):
			t, err := r.nameTaken(ctx, e, obj)
			if t != nil {
				mu.Lock()
				taken = append(taken, *t)
				mu.Unlock()
			}
			return err
		case apierrors.IsInvalid(err):
			// The API server rejects the object itself: retrying the same
			// object cannot succeed (only a spec change can).
			return reconcile.TerminalError(fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err))
		}
		return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
	}); err != nil {
		return int(took.Load()), taken, err
	}
	err := r.parallel(ctx, p.Update, func(ctx context.Context, obj planning.Object) error {
		if err := r.client.Update(ctx, obj); err != nil {
			return fmt.Errorf("update %T %s: %w", obj, obj.GetName(), err)
		}
		took.Add(1)
		return nil
	})
	if err != nil {
		return int(took.Load()), taken, err
	}
	err = r.parallel(ctx, annotated(p.Annotate), func(ctx context.Context, obj planning.Object) error {
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": obj.GetAnnotations()}})
		if err != nil {
			return err
		}
		if err := r.client.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
			return fmt.Errorf("annotate %T %s: %w", obj, obj.GetName(), err)
		}
		took.Add(1)
		return nil
	})
	return int(took.Load()), taken, err
}

// annotated is each Annotate's object carrying only its new annotations,
// the body of its merge patch.
func annotated(as []planning.Annotate) []planning.Object {
	out := make([]planning.Object, 0, len(as))
	for _, a := range as {
		obj, ok := a.Object.DeepCopyObject().(planning.Object)
		if !ok {
			continue
		}
		obj.SetAnnotations(a.Annotations)
		out = append(out, obj)
	}
	return out
}

// nameTaken reads the object that made the creation of child fail with
// AlreadyExists, from the API server (the cache holds only what this
// operator labels). It returns nil when e controls it (the cache was
// behind, or the object is already gone), else what is in the way.
func (r *EvaluationReconciler) nameTaken(ctx context.Context, e *repotv1.RepotEvaluation, child planning.Object) (*planning.TakenName, error) {
	existing, ok := child.DeepCopyObject().(planning.Object)
	if !ok {
		return nil, fmt.Errorf("copy %T %s", child, child.GetName())
	}
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(child), existing); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil // gone since: the next pass creates it
		}
		return nil, fmt.Errorf("get %T %s, whose name is taken: %w", child, child.GetName(), err)
	}
	if planning.OwnedBy(e, existing) {
		return nil, nil
	}
	t := planning.NewTakenName(child, existing)
	return &t, nil
}

// parallel runs f on every object, a few at a time, and returns the first
// error. One failure does not cancel the others: the writes of a pass are
// independent and few (the planner's budget), and a rejected child must not
// leave its siblings half-written (a Deployment the API server rejects
// still gets its Service, whichever is sent first).
func (r *EvaluationReconciler) parallel(ctx context.Context, objs []planning.Object, f func(context.Context, planning.Object) error) error {
	if len(objs) == 0 {
		return nil
	}
	var g errgroup.Group
	g.SetLimit(createParallelism)
	for _, o := range objs {
		g.Go(func() error { return f(ctx, o) })
	}
	return g.Wait()
}
