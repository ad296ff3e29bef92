package cli

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
	t.Setenv(artifacts.EnvAccessKeyID, creds.AccessKeyID)
	t.Setenv(artifacts.EnvSecretAccessKey, creds.SecretAccessKey)
	msg := filepath.Join(t.TempDir(), "termination-log")
	cmd := newArtifactsCommand()
	cmd.SetArgs(append([]string{"probe",
		"--artifacts-endpoint=" + srv.Endpoint, "--artifacts-bucket=" + srv.Bucket, "--artifacts-insecure",
		"--namespace=ns", "--evaluation=ev", "--evaluation-uid=3f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f",
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
