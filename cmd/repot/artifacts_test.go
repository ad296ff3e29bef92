package repot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3test"
)

// runProbe runs `repot artifacts probe` against srv with the given
// credentials in the environment and returns its termination message
// and its error.
func runProbe(t *testing.T, srv *s3test.Server, creds artifacts.Credentials, extra ...string) (string, error) {
	t.Helper()
	return runArtifacts(t, "probe", srv, creds, extra...)
}

// runArtifacts runs `repot artifacts VERB` on evaluation ns/ev (UID
// testUID) as runProbe does.
func runArtifacts(t *testing.T, verb string, srv *s3test.Server, creds artifacts.Credentials, extra ...string) (string, error) {
	t.Helper()
	t.Setenv(artifacts.EnvAccessKeyID, creds.AccessKeyID)
	t.Setenv(artifacts.EnvSecretAccessKey, creds.SecretAccessKey)
	msg := filepath.Join(t.TempDir(), "termination-log")
	cmd := newArtifactsCommand()
	cmd.SetArgs(append([]string{verb,
		"--artifacts-endpoint=" + srv.Endpoint, "--artifacts-bucket=" + srv.Bucket, "--artifacts-insecure",
		"--namespace=ns", "--evaluation=ev", "--evaluation-uid=" + testUID,
		"--termination-message=" + msg, "--timeout=20s",
	}, extra...))
	cmd.SetOut(&strings.Builder{})
	cmd.SetErr(&strings.Builder{})
	err := cmd.Execute()
	b, rerr := os.ReadFile(msg)
	if rerr != nil {
		t.Fatalf("no termination message: %v", rerr)
	}
	return string(b), err
}

const testUID = "3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"

func TestArtifactsProbe(t *testing.T) {
	srv := s3test.Start(t)
	if msg, err := runProbe(t, srv, srv.Creds); err != nil || msg != "ok" {
		t.Errorf("probe of a good store = %v, message %q; want nil and ok", err, msg)
	}
	wrong := artifacts.Credentials{AccessKeyID: srv.Creds.AccessKeyID, SecretAccessKey: "not-the-secret"}
	msg, err := runProbe(t, srv, wrong)
	if err == nil || !strings.Contains(msg, "credentials refused") {
		t.Errorf("probe with a wrong secret = %v, message %q; want an error saying the credentials were refused", err, msg)
	}
	msg, err = runProbe(t, srv, srv.Creds, "--artifacts-bucket=no-such-bucket")
	if err == nil || !strings.Contains(msg, `bucket "no-such-bucket" does not exist`) {
		t.Errorf("probe of a missing bucket = %v, message %q", err, msg)
	}
	msg, err = runProbe(t, srv, srv.Creds, "--evaluation=../x")
	if err == nil || !strings.Contains(msg, "evaluation") {
		t.Errorf("probe with a bad evaluation name = %v, message %q; want it refused before any request", err, msg)
	}
}

func TestArtifactsRemove(t *testing.T) {
	srv := s3test.Start(t)
	st := srv.Open(t, "")
	own := artifacts.Layout{Namespace: "ns", Evaluation: "ev", UID: testUID}
	// The same name's earlier evaluation (another UID), and a name that
	// shares the prefix's characters.
	others := []artifacts.Layout{
		{Namespace: "ns", Evaluation: "ev", UID: "0f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"},
		{Namespace: "ns", Evaluation: "ev2", UID: testUID},
	}
	for _, l := range append([]artifacts.Layout{own}, others...) {
		for i := range 3 {
			if _, err := st.PutBytes(t.Context(), l.SegmentKey(artifacts.Shard{Model: "m"}, i), []byte("{}\n")); err != nil {
				t.Fatal(err)
			}
		}
	}
	msg, err := runArtifacts(t, "remove", srv, srv.Creds)
	if err != nil || !strings.Contains(msg, "deleted 3 objects") {
		t.Fatalf("remove = %v, message %q; want 3 objects deleted", err, msg)
	}
	if left, err := st.List(t.Context(), own.EvaluationPrefix()); err != nil || len(left) != 0 {
		t.Errorf("left under the evaluation's prefix: %v (%v)", left, err)
	}
	for _, l := range others {
		if kept, err := st.List(t.Context(), l.EvaluationPrefix()); err != nil || len(kept) != 3 {
			t.Errorf("%s: %d objects left of 3 (%v): another evaluation's traces were touched", l.EvaluationPrefix(), len(kept), err)
		}
	}
	// Nothing left: still a success (a retried Job).
	if msg, err := runArtifacts(t, "remove", srv, srv.Creds); err != nil || !strings.Contains(msg, "deleted 0 objects") {
		t.Errorf("second remove = %v, message %q", err, msg)
	}
	wrong := artifacts.Credentials{AccessKeyID: srv.Creds.AccessKeyID, SecretAccessKey: "not-the-secret"}
	if msg, err := runArtifacts(t, "remove", srv, wrong); err == nil || !strings.Contains(msg, "credentials refused") {
		t.Errorf("remove with a wrong secret = %v, message %q; want the credentials refused", err, msg)
	}
}
