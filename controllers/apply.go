package controllers

import (
	"context"
	"fmt"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// createParallelism bounds the concurrent writes of one reconcile. It is
// large enough that the first wave of a 16-model evaluation (ledgers,
// servers, access objects) is one round of requests, not several.
const createParallelism = 32

// applyChildren carries out a plan's child changes: deletions first (a
// child already gone is fine), so that a finished model's server releases
// its GPUs before anything new asks for them; then creations (a child that
// already exists is fine: the cache was behind); then updates (optimistic:
// a conflict requeues). Creations go in three waves, in parallel within a
// wave: first the service account, Role, ledgers, servers and network
// policy; then the RoleBinding (the API server checks that the operator
// holds what the bound Role grants, so the Role must exist); then the
// runner Jobs, so that a Job is never created when its ledgers or identity
// could not be. The first error ends the pass and requeues it.
func (r *EvaluationReconciler) applyChildren(ctx context.Context, p *plan) error {
	if err := r.parallel(ctx, p.Delete, func(ctx context.Context, obj client.Object) error {
		err := r.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground))
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
		}
		return nil
	}); err != nil {
		return err
	}
	byWave := make([][]client.Object, waves)
	for _, o := range p.Create {
		w := waveFirst
		if k := kindOf(o); k != nil {
			w = k.wave()
		}
		byWave[w] = append(byWave[w], o)
	}
	for _, wave := range byWave {
		if err := r.parallel(ctx, wave, func(ctx context.Context, obj client.Object) error {
			err := r.client.Create(ctx, obj)
			switch {
			case err == nil, apierrors.IsAlreadyExists(err):
				return nil
			case apierrors.IsInvalid(err):
				// The API server rejects the object itself: retrying the
				// same object cannot succeed (only a spec change can).
				return reconcile.TerminalError(fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err))
			}
			return fmt.Errorf("create %T %s: %w", obj, obj.GetName(), err)
		}); err != nil {
			return err
		}
	}
	return r.parallel(ctx, p.Update, func(ctx context.Context, obj client.Object) error {
		if err := r.client.Update(ctx, obj); err != nil {
			return fmt.Errorf("update %T %s: %w", obj, obj.GetName(), err)
		}
		return nil
	})
}

// parallel runs f on every object, a few at a time, and returns the first
// error.
func (r *EvaluationReconciler) parallel(ctx context.Context, objs []client.Object, f func(context.Context, client.Object) error) error {
	if len(objs) == 0 {
		return nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(createParallelism)
	for _, o := range objs {
		g.Go(func() error { return f(ctx, o) })
	}
	return g.Wait()
}
