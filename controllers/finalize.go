package controllers

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
	"repot.dev/repot-operator/controllers/planning"
)

// syncFinalizer adds build.FinalizerArtifactsCleanup to an evaluation
// whose stored traces must not outlive it, before anything of it can
// upload, and removes it once spec.artifacts.retainAfterDeletion says they
// stay. The patch carries the resourceVersion: a concurrent edit of the
// finalizers is retried, never overwritten. e's status stays the one
// fetch gave.
func (r *EvaluationReconciler) syncFinalizer(ctx context.Context, e *repotv1.RepotEvaluation) error {
	want := planning.WantsArtifactsFinalizer(e)
	if want == controllerutil.ContainsFinalizer(e, build.FinalizerArtifactsCleanup) {
		return nil
	}
	return r.patchFinalizer(ctx, e, want)
}

func (r *EvaluationReconciler) patchFinalizer(ctx context.Context, e *repotv1.RepotEvaluation, add bool) error {
	st := e.Status
	base := e.DeepCopy()
	if add {
		controllerutil.AddFinalizer(e, build.FinalizerArtifactsCleanup)
	} else {
		controllerutil.RemoveFinalizer(e, build.FinalizerArtifactsCleanup)
	}
	err := r.client.Patch(ctx, e, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{}))
	e.Status = st
	if err != nil && !(apierrors.IsNotFound(err) && !add) {
		return fmt.Errorf("finalizer %s: %w", build.FinalizerArtifactsCleanup, err)
	}
	return nil
}

// finalize carries out the deletion of an evaluation that holds
// build.FinalizerArtifactsCleanup (planning.PlanDeletion): its runners
// stop, a Job deletes its stored traces, and the finalizer goes. Without
// the finalizer there is nothing to do: owner references let the garbage
// collector remove every child.
func (r *EvaluationReconciler) finalize(ctx context.Context, e *repotv1.RepotEvaluation) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(e, build.FinalizerArtifactsCleanup) {
		return ctrl.Result{}, nil
	}
	w, err := r.deletionWorld(ctx, e)
	if err != nil {
		return ctrl.Result{}, err
	}
	o := r.planOptions(ctx)
	p := planning.PlanDeletion(e, w, o)
	for _, obj := range p.Delete {
		if err := r.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("delete %T %s: %w", obj, obj.GetName(), err)
		}
	}
	for _, op := range p.Queue {
		if err := r.queue.Delete(ctx, op.Workload); err != nil {
			return ctrl.Result{}, err
		}
	}
	if p.Create != nil {
		err := r.client.Create(ctx, p.Create)
		switch {
		case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
			w.NamespaceTerminating = true
			p = planning.PlanDeletion(e, w, o)
		case err != nil && !apierrors.IsAlreadyExists(err):
			return ctrl.Result{}, fmt.Errorf("create Job %s: %w", p.Create.GetName(), err)
		}
	}
	if p.Condition != nil && !p.RemoveFinalizer {
		st := e.Status.DeepCopy()
		apimeta.SetStatusCondition(&st.Conditions, *p.Condition)
		if err := r.writeStatus(ctx, e, *st); err != nil {
			return ctrl.Result{}, fmt.Errorf("record the cleanup's failure: %w", err)
		}
	}
	if p.RemoveFinalizer {
		if err := r.patchFinalizer(ctx, e, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	r.emit(e, p.Events)
	return ctrl.Result{RequeueAfter: p.RequeueAfter}, nil
}

// deletionWorld reads what planning.PlanDeletion depends on: the
// evaluation's Jobs and Deployments through the owner index, and its pods.
func (r *EvaluationReconciler) deletionWorld(ctx context.Context, e *repotv1.RepotEvaluation) (planning.DeletionWorld, error) {
	w := planning.DeletionWorld{Now: r.opts.Clock.Now()}
	owned := []client.ListOption{client.InNamespace(e.Namespace), client.MatchingFields{build.OwnerKey: string(e.UID)}}
	var jobs batchv1.JobList
	if err := r.client.List(ctx, &jobs, owned...); err != nil {
		return w, fmt.Errorf("list owned jobs: %w", err)
	}
	w.Jobs, w.Cleanup = planning.SplitArtifactsCleanup(jobs.Items)
	var deps appsv1.DeploymentList
	if err := r.client.List(ctx, &deps, owned...); err != nil {
		return w, fmt.Errorf("list owned deployments: %w", err)
	}
	w.Deployments = deps.Items
	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(e.Namespace),
		client.MatchingLabels{build.LabelEvaluation: e.Name}); err != nil {
		return w, fmt.Errorf("list pods: %w", err)
	}
	for _, p := range pods.Items {
		switch {
		case !ownPod(e, &p), p.Labels[build.LabelArtifactsProbe] == "true":
		case p.Labels[build.LabelArtifactsCleanup] == "true":
			w.CleanupPods = append(w.CleanupPods, p)
		case p.Labels[build.LabelComponent] == build.ComponentRunner:
			w.RunnerPods = append(w.RunnerPods, p)
		case p.Labels[build.LabelComponent] == build.ComponentServer:
			w.ServerPods = append(w.ServerPods, p)
		}
	}
	if r.queue != nil && kueueadapter.QueueName(e) != "" {
		qw, err := r.queue.Observe(ctx, e)
		if err != nil {
			return w, err
		}
		w.Workloads = qw.Workloads
	}
	return w, nil
}
