package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/dynamic"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// storedTraces prints what the demo's evaluations stored in the local
// cluster's artifact store: status.artifacts, and the chain-tree examples of
// the stored traces, written to DIR/chaintree-NAME.jsonl by `repot results
// export --format chaintree --evaluation NAME`. The evaluations completed, but the runners'
// last uploads reach status.artifacts a little later: it waits for their
// state to leave Uploading, up to a minute.
func storedTraces(ctx context.Context, out io.Writer, dyn dynamic.Interface, store *cluster.ArtifactStore, repot, kubeconfig, ns, dir string, names []string) error {
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
		path, err := filepath.Abs(filepath.Join(dir, "chaintree-"+e.Name+".jsonl"))
		if err != nil {
			return err
		}
		// The user's own commands, from the host: the store's in-cluster
		// name does not resolve here, so --store-endpoint gives its pod.
		flags := []string{"--kubeconfig", kubeconfig, "-n", ns, "--evaluation", e.Name, "--store-endpoint", store.HostEndpoint}
		b, err := runRepot(ctx, repot, store.Creds, append([]string{"results", "export", "--format", "chaintree", "--out", path}, flags...)...)
		indent(out, b)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  examples: %s\n", path)
		// The judge re-judges every stored trace with the exact verifier
		// and compares with the ledgers and the status; a disagreement is
		// a bug, and fails the demo.
		b, err = runRepot(ctx, repot, store.Creds, append([]string{"judge"}, flags...)...)
		indent(out, b)
		if err != nil {
			return err
		}
	}
	return nil
}

// runRepot runs the host's repot, with the store's credentials (when set)
// in its environment, and returns what it printed (also when it failed).
func runRepot(ctx context.Context, repot string, creds artifacts.Credentials, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, repot, args...)
	if creds != (artifacts.Credentials{}) {
		cmd.Env = append(os.Environ(),
			artifacts.EnvAccessKeyID+"="+creds.AccessKeyID,
			artifacts.EnvSecretAccessKey+"="+creds.SecretAccessKey)
	}
	b, err := cmd.CombinedOutput()
	if err != nil {
		return b, fmt.Errorf("repot %s: %w", args[0], err)
	}
	return b, nil
}

// indent prints b's lines indented under the demo's step.
func indent(out io.Writer, b []byte) {
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		fmt.Fprintf(out, "  %s\n", l)
	}
}
