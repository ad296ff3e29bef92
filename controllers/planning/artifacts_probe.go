package planning

import (
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// probeRetry is how long a failed store probe stands before a new one runs
// (the Secret may have been fixed; the Secret is not in the spec, so no
// spec change says so).
const probeRetry = time.Minute

// SplitArtifactsProbe separates the artifact store's probe Job
// (build.LabelArtifactsProbe) from the runner Jobs.
func SplitArtifactsProbe(jobs []batchv1.Job) ([]batchv1.Job, *batchv1.Job) {
	var probe *batchv1.Job
	out := jobs[:0:0]
	for i := range jobs {
		if jobs[i].Labels[build.LabelArtifactsProbe] == "true" {
			probe = &jobs[i]
			continue
		}
		out = append(out, jobs[i])
	}
	return out, probe
}

// storeProbe is what is known of the evaluation's artifact store before it
// starts.
type storeProbe struct {
	// Gated is true while the evaluation must not start: the store is
	// being probed, or the probe failed.
	Gated bool
	// Failed is the probe's verdict when it failed ("" otherwise).
	Failed string
	// Written is true once a probe succeeded (or the evaluation started).
	Written bool
	// RecheckAfter is when a failed probe is due again.
	RecheckAfter time.Duration
}

// observeStoreProbe reads the probe Job of an evaluation with an S3 store.
// An evaluation that already ran is not gated again (an operator upgrade
// or a default store set mid-run must not stop it).
func observeStoreProbe(e *repotv1.RepotEvaluation, w *World, s *repotv1.S3Store) storeProbe {
	if s == nil || hasRun(e, w) {
		return storeProbe{Written: s != nil}
	}
	j := w.ArtifactsProbe
	if j == nil || j.Annotations[build.AnnotationArtifactsStore] != build.StoreHash(s) {
		return storeProbe{Gated: true}
	}
	if c := jobCondition(j, batchv1.JobComplete); c != nil {
		return storeProbe{Written: true}
	}
	if c := jobCondition(j, batchv1.JobFailed); c != nil {
		msg := terminationVerdict(w.ArtifactsProbePods)
		if msg == "" {
			msg = c.Reason + ": " + c.Message
		}
		return storeProbe{Gated: true, Failed: msg, RecheckAfter: max(time.Second, probeRetry-w.Now.Sub(c.LastTransitionTime.Time))}
	}
	return storeProbe{Gated: true}
}

// terminationVerdict is the termination message of the latest of pods
// (a probe's or a cleanup's) that ended.
func terminationVerdict(pods []corev1.Pod) string {
	var msg string
	var at time.Time
	for i := range pods {
		for _, cs := range pods[i].Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil && t.Message != "" && !t.FinishedAt.Time.Before(at) {
				msg, at = t.Message, t.FinishedAt.Time
			}
		}
	}
	return msg
}

// planArtifactsProbe creates the probe Job (once the runner's identity and
// network policy exist, since the probe runs as a runner), replaces one
// of another store setting, and deletes a failed one once probeRetry has
// passed, so that the next pass probes again.
func (p *Plan) planArtifactsProbe(e *repotv1.RepotEvaluation, w *World, o build.Options, s *repotv1.S3Store, probe storeProbe, accessReady bool) {
	if !probe.Gated {
		return
	}
	j := w.ArtifactsProbe
	switch {
	case j == nil:
		if accessReady {
			p.Create = append(p.Create, build.ArtifactsProbeJob(e, s, o))
		}
	case j.Annotations[build.AnnotationArtifactsStore] != build.StoreHash(s):
		p.Delete = append(p.Delete, j)
	case probe.Failed != "" && probe.RecheckAfter <= time.Second:
		p.Delete = append(p.Delete, j)
	}
	p.requeueIn(probe.RecheckAfter)
}

// artifactsConditions adds ArtifactStoreUnavailable while the evaluation
// has an S3 store: True with the probe's verdict when the probe failed
// (then the evaluation is also Stalled: a person must fix the store, its
// Secret or spec.artifacts.s3), else False.
func artifactsConditions(st *repotv1.RepotEvaluationStatus, e *repotv1.RepotEvaluation, w *World, s *repotv1.S3Store, probe storeProbe) {
	if s == nil {
		return
	}
	cs := newConditionSet(e.Status.Conditions, e.Generation, metav1.NewTime(w.Now))
	msg := fmt.Sprintf("the store at %s failed the probe with the runners' credentials: %s; fix the endpoint, the bucket or the Secret %q (or spec.artifacts.s3); the probe runs again every %s, and nothing of the evaluation starts until it passes",
		s.Endpoint, probe.Failed, s.CredentialsSecret, probeRetry)
	for _, c := range st.Conditions {
		if c.Type == repotv1.ConditionStalled && probe.Failed != "" {
			cs.set(c.Type, true, repotv1.ReasonArtifactStoreUnavailable, msg)
			continue
		}
		cs.out = append(cs.out, c)
	}
	switch {
	case probe.Failed != "":
		cs.set(repotv1.ConditionArtifactStoreUnavailable, true, repotv1.ReasonArtifactStoreUnavailable, msg)
	case probe.Written:
		cs.set(repotv1.ConditionArtifactStoreUnavailable, false, repotv1.ReasonStoreWritable,
			fmt.Sprintf("the runners' credentials can write s3://%s at %s", s.Bucket, s.Endpoint))
	default:
		cs.set(repotv1.ConditionArtifactStoreUnavailable, false, repotv1.ReasonProbingStore,
			fmt.Sprintf("probing s3://%s at %s with the runners' credentials before anything starts", s.Bucket, s.Endpoint))
	}
	st.Conditions = cs.out
}
