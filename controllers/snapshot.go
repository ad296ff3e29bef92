package controllers

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"

	"repot.dev/repot-operator/controllers/planning"
)

// snapshot reads the world of one evaluation: its children through the
// owner index, by the evaluation's UID (with the writes of this reconciler
// the cache lacks), its server and runner pods by label and UID
// (ownPod), its ledgers' records (parsed once per ConfigMap
// resourceVersion; a sealed evaluation's ledgers are read from the API
// server and parsed for the pass alone) and its problem set. Nothing of
// an earlier evaluation of the same name is read.
func (r *EvaluationReconciler) snapshot(ctx context.Context, e *repotv1.RepotEvaluation) (*planning.World, error) {
	w := &planning.World{Now: r.opts.Clock.Now()}
	owned := []client.ListOption{client.InNamespace(e.Namespace), client.MatchingFields{build.OwnerKey: string(e.UID)}}
	for _, k := range planning.ChildKinds {
		l := k.NewList()
		if err := r.client.List(ctx, l, owned...); err != nil {
			return nil, fmt.Errorf("list owned %s: %w", k.Plural(), err)
		}
		k.SetList(w, l)
	}
	// The cache may not show this reconciler's last writes yet.
	r.pending.overlay(planning.NamespacedName(e), w)
	// The artifact store's probe Job is not a runner Job.
	w.Jobs, w.ArtifactsProbe = planning.SplitArtifactsProbe(w.Jobs)
	// Only the ledgers e builds, by name, with the labels their names
	// imply: the runner may patch a ledger's metadata (ExpectedLedgers).
	w.Ledgers, w.StrayLedgers = planning.ExpectedLedgers(e, w.Ledgers)

	// Names on the runner path that objects e does not control hold: the
	// decision must know them (planning.RunnerPathChildren). Read from the
	// API server: the cache holds only objects with the operator's labels.
	for _, o := range planning.RunnerPathChildren(e, w) {
		got := o.DeepCopyObject().(client.Object)
		err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(o), got)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("look up %T %s: %w", o, o.GetName(), err)
		case !planning.OwnedBy(e, got):
			w.NameTaken = append(w.NameTaken, planning.NewTakenName(o, got))
		}
	}

	var pods corev1.PodList
	if err := r.client.List(ctx, &pods, client.InNamespace(e.Namespace),
		client.MatchingLabels{build.LabelEvaluation: e.Name}); err != nil {
		return nil, fmt.Errorf("list pods: %w", err)
	}
	for _, p := range pods.Items {
		if !ownPod(e, &p) {
			continue
		}
		switch {
		case p.Labels[build.LabelArtifactsProbe] == "true":
			w.ArtifactsProbePods = append(w.ArtifactsProbePods, p)
		case p.Labels[build.LabelComponent] == build.ComponentServer:
			w.ServerPods = append(w.ServerPods, p)
		case p.Labels[build.LabelComponent] == build.ComponentRunner:
			w.RunnerPods = append(w.RunnerPods, p)
		}
	}
	if err := r.readMountFailures(ctx, e, w); err != nil {
		return nil, err
	}
	if err := r.readRunnerCreateFailures(ctx, e, w); err != nil {
		return nil, err
	}
	if err := r.observeKueue(ctx, e, w); err != nil {
		return nil, err
	}

	// A sealed evaluation's ledgers have no data in the cache
	// (DropConfigMapData): this pass reads them from the API server.
	if planning.Sealed(w.Ledgers) {
		ls, err := r.listLedgers(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("read the sealed ledgers: %w", err)
		}
		w.Ledgers = ls
	}
	r.readRecords(ctx, e, w)

	w.Problems = planning.ProblemsFromSpec(e)
	if p := e.Spec.Problems; p != nil && p.ConfigMap != nil {
		var cm corev1.ConfigMap
		err := r.apiReader.Get(ctx, types.NamespacedName{Namespace: e.Namespace, Name: p.ConfigMap.Name}, &cm)
		switch {
		case apierrors.IsNotFound(err):
			w.Problems = planning.ProblemsFromConfigMap(p.ConfigMap, nil)
		case err != nil:
			return nil, fmt.Errorf("get problems ConfigMap %s: %w", p.ConfigMap.Name, err)
		default:
			w.Problems = planning.ProblemsFromConfigMap(p.ConfigMap, &cm)
		}
	}
	return w, nil
}

// readRecords parses the records of w.Ledgers (each ConfigMap once per
// resourceVersion) and aggregates them into w.Results. The records of
// sealed ledgers (an ended evaluation's, planning.Sealed) are parsed for
// this pass alone: nothing of them stays in r.ledgers, so that a finished
// evaluation holds neither ledger text (the cache drops it) nor records in
// the operator's memory between its (rare) passes.
func (r *EvaluationReconciler) readRecords(ctx context.Context, e *repotv1.RepotEvaluation, w *planning.World) {
	key := planning.NamespacedName(e)
	records := r.ledgers
	if planning.Sealed(w.Ledgers) {
		r.ledgers.Forget(key)
		records = planning.NewRecordCache()
	}
	w.Records, w.LedgerProblems = records.Read(key, w.Ledgers)
	w.ShardsInFlight = planning.ShardsInFlight(w.Ledgers, records.RecordsOf(key))
	w.ShardSpend = planning.ShardSpending(w.Ledgers, records.RecordsOf(key))
	res := records.Results(key, planning.ResultsKey(e.Generation, w.Ledgers), func() planning.EvaluationResults {
		return planning.ComputeResults(e, w.Records)
	})
	w.Results = &res
	if n := len(w.LedgerProblems); n > 0 {
		log.FromContext(ctx).Info("skipping ledger lines that are not records", "count", n, "first", w.LedgerProblems[0].String())
	}
}

// confirmLedgers reads e's ledgers from the API server rather than the
// cache, and the records with them. Complete is final, and a runner Job
// completes only once its ledger confirmed every record, but the cache
// may show the Job's completion before the last ledger patch: the pass
// that would first write Complete confirms it on the ledgers as stored.
func (r *EvaluationReconciler) confirmLedgers(ctx context.Context, e *repotv1.RepotEvaluation, w *planning.World) error {
	ls, err := r.listLedgers(ctx, e)
	if err != nil {
		return fmt.Errorf("read the ledgers to confirm completion: %w", err)
	}
	w.Ledgers = ls
	r.readRecords(ctx, e, w)
	return nil
}

// listLedgers reads e's ledgers (and spills) from the API server rather
// than the cache: the ledgers as stored, data included, those e expects
// alone (planning.ExpectedLedgers).
func (r *EvaluationReconciler) listLedgers(ctx context.Context, e *repotv1.RepotEvaluation) ([]corev1.ConfigMap, error) {
	var cms corev1.ConfigMapList
	if err := r.apiReader.List(ctx, &cms, client.InNamespace(e.Namespace),
		client.MatchingLabels{build.LabelEvaluation: e.Name, build.LabelComponent: build.ComponentLedger}); err != nil {
		return nil, err
	}
	out := cms.Items[:0]
	for _, cm := range cms.Items {
		if planning.OwnedBy(e, &cm) {
			out = append(out, cm)
		}
	}
	expected, _ := planning.ExpectedLedgers(e, out)
	return expected, nil
}

// ownPod says whether p is a pod of e's servers or runners rather than of
// an earlier evaluation of the same name: its evaluation-uid label names
// e. A pod without that label was made from a template of an operator
// version before the label; it is e's when it is not older than e (an
// earlier evaluation's pods are).
func ownPod(e *repotv1.RepotEvaluation, p *corev1.Pod) bool {
	if uid, ok := p.Labels[build.LabelEvaluationUID]; ok {
		return uid == string(e.UID)
	}
	return !p.CreationTimestamp.Before(&e.CreationTimestamp)
}

// readMountFailures reads the FailedMount events of the runner pods that
// are Pending past their grace period (usually none, so usually no call):
// the kubelet reports a volume that does not mount only as an event.
func (r *EvaluationReconciler) readMountFailures(ctx context.Context, e *repotv1.RepotEvaluation, w *planning.World) error {
	grace := time.Duration(e.Spec.StalledAfterSecondsOrDefault()) * time.Second
	for _, name := range planning.PendingPastGrace(w.RunnerPods, w.Now, grace) {
		var evs corev1.EventList
		if err := r.apiReader.List(ctx, &evs, client.InNamespace(e.Namespace),
			client.MatchingFields{"involvedObject.name": name, "reason": "FailedMount"}); err != nil {
			return fmt.Errorf("list events of runner pod %s: %w", name, err)
		}
		var last *corev1.Event
		for i := range evs.Items {
			if last == nil || evs.Items[i].LastTimestamp.After(last.LastTimestamp.Time) {
				last = &evs.Items[i]
			}
		}
		if last != nil {
			if w.MountFailures == nil {
				w.MountFailures = map[string]string{}
			}
			w.MountFailures[name] = planning.Truncate(last.Message, 512)
		}
	}
	return nil
}

// readRunnerCreateFailures reads the FailedCreate events of the runner
// Jobs that should run but have no live pod (usually none, so usually no
// call): the Job controller reports the API server's refusal of a pod (a
// ResourceQuota, Pod Security admission, a webhook) only as an event. The
// events are matched by the Job's UID, so an earlier Job of the same name
// counts for nothing.
func (r *EvaluationReconciler) readRunnerCreateFailures(ctx context.Context, e *repotv1.RepotEvaluation, w *planning.World) error {
	for _, j := range planning.RunnerJobsWithoutPods(e, w) {
		var evs corev1.EventList
		if err := r.apiReader.List(ctx, &evs, client.InNamespace(e.Namespace),
			client.MatchingFields{"involvedObject.uid": string(j.UID), "reason": "FailedCreate"}); err != nil {
			return fmt.Errorf("list events of runner Job %s: %w", j.Name, err)
		}
		if msg := planning.LatestCreateFailure(evs.Items, w.Now, planning.NewestRunnerPod(e, w, j)); msg != "" {
			if w.RunnerCreateFailures == nil {
				w.RunnerCreateFailures = map[string]string{}
			}
			w.RunnerCreateFailures[j.Name] = msg
		}
	}
	return nil
}
