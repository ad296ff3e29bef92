package results

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/analysis/report"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
)

// StoredTraces is where an evaluation's traces are and what its manifests
// say of them.
type StoredTraces struct {
	Evaluation *repotv1.RepotEvaluation
	Store      *s3.Store
	Layout     artifacts.Layout
	Manifest   artifacts.Manifest
}

// OpenStoredTraces finds an evaluation's artifact store from its
// status.artifacts (which also names the operator's default store), checks
// it, and reads the shards' manifests. The status is input, not trusted: the
// location is validated and the key prefix must be the evaluation's own.
// creds are the reader's own (artifacts.CredentialsFromEnv); endpoint, when
// set, replaces the status's endpoint: the same store as the reader reaches
// it from outside the cluster.
func OpenStoredTraces(ctx context.Context, c client.Reader, namespace, name string, creds artifacts.Credentials, endpoint string) (*StoredTraces, error) {
	e := &repotv1.RepotEvaluation{}
	if err := c.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, e); err != nil {
		return nil, fmt.Errorf("reading RepotEvaluation %s/%s: %w", namespace, name, err)
	}
	a := e.Status.Artifacts
	if a == nil {
		return nil, fmt.Errorf("evaluation %s/%s has no artifact store, so its traces stayed in its runner pods: set spec.artifacts.s3 (or the operator's default store, the chart's artifacts.s3.endpoint) for the next evaluation (docs/artifacts.md)", namespace, name)
	}
	rest, ok := strings.CutPrefix(a.URL, "s3://")
	bucket, keyPrefix, _ := strings.Cut(rest, "/")
	layout := artifacts.Layout{Namespace: e.Namespace, Evaluation: e.Name, UID: string(e.UID)}
	own := layout.EvaluationPrefix() // NAMESPACE/NAME/UID/
	prefix, ok2 := strings.CutSuffix(keyPrefix, own)
	if !ok || !ok2 || (prefix != "" && !strings.HasSuffix(prefix, "/")) {
		return nil, fmt.Errorf("status.artifacts.url of %s/%s is %q, not s3://BUCKET/[PREFIX/]%s", namespace, name, a.URL, own)
	}
	layout.Prefix = strings.TrimSuffix(prefix, "/")
	if endpoint == "" {
		endpoint = a.Endpoint
	}
	loc := artifacts.Location{Endpoint: endpoint, Bucket: bucket, Prefix: layout.Prefix, Region: a.Region, Insecure: a.Insecure}
	st, err := s3.Open(loc, creds, s3.Options{})
	if err != nil {
		return nil, fmt.Errorf("the artifact store of %s/%s: %w", namespace, name, err)
	}
	var shards []artifacts.Shard
	for _, m := range e.Spec.Models {
		for i := range int(e.Spec.ShardsPerModelOrDefault()) {
			shards = append(shards, artifacts.Shard{Model: m.Name, Index: i})
		}
	}
	m, err := s3.Collect(ctx, st, layout, shards)
	if err != nil {
		return nil, err
	}
	return &StoredTraces{Evaluation: e, Store: st, Layout: layout, Manifest: m}, nil
}

// Each streams every stored trace line to fn, in model, shard and segment
// order, each object checked against its manifest's size and sha256.
func (s *StoredTraces) Each(ctx context.Context, fn func(line []byte) error) error {
	return s3.Traces(ctx, s.Store, s.Manifest, fn)
}

// Warning says what is missing from the store ("" when the upload is
// complete): shards without a manifest or not final, and lost bytes.
func (s *StoredTraces) Warning() string {
	if s.Manifest.Complete {
		return ""
	}
	var notFinal []string
	for _, sm := range s.Manifest.Shards {
		if !sm.Final {
			notFinal = append(notFinal, sm.Shard.String())
		}
	}
	msg := fmt.Sprintf("the traces of %s/%s are not complete in the store", s.Evaluation.Namespace, s.Evaluation.Name)
	if st := s.Evaluation.Status.Artifacts; st != nil {
		msg += fmt.Sprintf(" (status.artifacts.state %s)", st.State)
	}
	if len(notFinal) > 0 {
		msg += fmt.Sprintf("; shards not finished: %s", strings.Join(notFinal, ", "))
	}
	if s.Manifest.LostBytes > 0 {
		msg += fmt.Sprintf("; %d bytes of traces were lost", s.Manifest.LostBytes)
	}
	return msg
}

// ReportTraces says where repot report finds the traces of evaluation e
// (report.Source.Traces): its artifact store, opened now (the manifests are
// read; the traces stream later), with creds and endpoint as for
// OpenStoredTraces. No store, or one that fails to open, is said in the
// result, never returned as an error: the report is written without the
// links.
func ReportTraces(ctx context.Context, c client.Reader, e *repotv1.RepotEvaluation, creds artifacts.Credentials, endpoint string) report.Traces {
	if e.Status.Artifacts == nil {
		return report.Traces{Missing: fmt.Sprintf("The evaluation %s/%s has no artifact store, so its traces stayed in its runner pods and its failed runs are not linked. "+
			"For the next evaluation, set spec.artifacts.s3, or give the operator a default store (its --artifacts-s3-endpoint, the chart's artifacts.s3.endpoint); docs/artifacts.md says how.", e.Namespace, e.Name)}
	}
	st, err := OpenStoredTraces(ctx, c, e.Namespace, e.Name, creds, endpoint)
	if err != nil {
		return report.Traces{Problem: err.Error()}
	}
	from := "the artifact store " + e.Status.Artifacts.URL
	if endpoint != "" {
		from += " (at " + endpoint + ")"
	}
	warning := st.Warning()
	if warning != "" {
		warning += "; linking what is there"
	}
	return report.Traces{From: from, Each: st.Each, Warning: warning}
}
