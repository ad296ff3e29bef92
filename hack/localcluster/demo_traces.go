package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/dynamic"

	"repot.dev/repot-operator/analysis/chaintree"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// evaluationLayout and evaluationShards are where an evaluation's traces
// are in a store without a prefix (the local cluster's), and its shards.
func evaluationLayout(e *repotv1.RepotEvaluation) artifacts.Layout {
	return artifacts.Layout{Namespace: e.Namespace, Evaluation: e.Name, UID: string(e.UID)}
}

func evaluationShards(e *repotv1.RepotEvaluation) []artifacts.Shard {
	var shards []artifacts.Shard
	for _, m := range e.Spec.Models {
		for i := range int(e.Spec.ShardsPerModelOrDefault()) {
			shards = append(shards, artifacts.Shard{Model: m.Name, Index: i})
		}
	}
	return shards
}

// storedTraces prints what the demo's evaluations stored in the local
// cluster's artifact store: status.artifacts, and the chain-tree examples of
// the stored traces (read from the store, as `repot results export
// --evaluation NAME --format chaintree` reads them), written to
// DIR/chaintree-NAME.jsonl. The evaluations completed, but the runners'
// last uploads reach status.artifacts a little later: it waits for their
// state to leave Uploading, up to a minute.
func storedTraces(ctx context.Context, out io.Writer, dyn dynamic.Interface, store *cluster.ArtifactStore, ns, dir string, names []string) error {
	deadline := time.Now().Add(time.Minute)
	var evals []*repotv1.RepotEvaluation
	for {
		all, err := listEvaluations(ctx, dyn, ns)
		if err != nil {
			return err
		}
		evals = evals[:0]
		uploading := false
		for _, e := range all {
			for _, n := range names {
				if e.Name == n {
					evals = append(evals, e)
					uploading = uploading || e.Status.Artifacts == nil || e.Status.Artifacts.State == repotv1.ArtifactsUploading
				}
			}
		}
		if !uploading || time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
	for _, e := range evals {
		a := e.Status.Artifacts
		if a == nil {
			fmt.Fprintf(out, "\ntraces of %s: no status.artifacts (the operator has no default store?)\n", e.Name)
			continue
		}
		fmt.Fprintf(out, "\ntraces of %s: status.artifacts: %s, state %s, %d objects, %d bytes", e.Name, a.URL, a.State, a.Objects, a.Bytes)
		if a.LostBytes > 0 {
			fmt.Fprintf(out, ", %d bytes lost", a.LostBytes)
		}
		if a.LastError != "" {
			fmt.Fprintf(out, ", last error %q", a.LastError)
		}
		fmt.Fprintf(out, " (endpoint %s)\n", a.Endpoint)
		st, m, err := store.Collect(ctx, evaluationLayout(e), a.URL, evaluationShards(e))
		if err != nil {
			return fmt.Errorf("traces of %s: %w", e.Name, err)
		}
		path, err := filepath.Abs(filepath.Join(dir, "chaintree-"+e.Name+".jsonl"))
		if err != nil {
			return err
		}
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		var total chaintree.Counts
		traces := 0
		opts := chaintree.Options{Completable: chaintree.SolverCompletable}
		err = artifacts.Traces(ctx, st, m, func(line []byte) error {
			traces++
			c, err := chaintree.ExportJSONL(f, bytes.NewReader(line), opts)
			total.Continue += c.Continue
			total.Answer += c.Answer
			total.Backtrack += c.Backtrack
			total.Skipped += c.Skipped
			return err
		})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("traces of %s: %w", e.Name, err)
		}
		fmt.Fprintf(out, "  %d traces in %d stored objects; chaintree: continue %d, answer %d, backtrack %d (skipped %d): %s\n",
			traces, m.Objects, total.Continue, total.Answer, total.Backtrack, total.Skipped, path)
		if !m.Complete {
			fmt.Fprintf(out, "  the upload is not complete: %d bytes lost\n", m.LostBytes)
		}
	}
	return nil
}
