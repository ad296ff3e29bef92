package report

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/envs"
	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner"
	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/runnertest"
)

// TestMain closes the shared python sandbox (runnertest.Python).
func TestMain(m *testing.M) { runnertest.Main(m) }

// simRun runs the default methods of the real engine against a real
// simulated server (over HTTP, through openai-go, programs in the python
// sandbox) on the first n problems of open-source-120, into dir as
// `repot run` does. The records are simulated; the pipeline that made them
// is the real one.
func simRun(t *testing.T, dir, profile string, seed int64, n int) {
	t.Helper()
	simRunWith(t, dir, profile, seed, n, contract.DefaultMethods, nil)
}

// simRunWith is simRun with the methods to run and a change to the
// options (nil: none).
func simRunWith(t *testing.T, dir, profile string, seed int64, n int, ms []string, change func(*methods.Options)) {
	t.Helper()
	prof, err := simserver.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	name := "sim-" + profile
	srv, err := simserver.New(simserver.Options{Profile: prof, Seed: seed, ModelName: name, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client, err := model.New(model.Config{
		BaseURL: hs.URL + "/v1", Model: name,
		SystemPrefix: contract.NoThinkPrefix, ExtraBody: model.DisableThinkingBody(),
		Retry:   model.RetryPolicy{MaxAttempts: 3, Initial: time.Millisecond, Max: time.Millisecond},
		Timeout: 5 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	problems, err := envs.Suite("open-source-120")
	if err != nil {
		t.Fatal(err)
	}
	out, err := runner.OpenOutput(dir, filepath.Join(dir, contract.TracesFile), false)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	opts := methods.DefaultOptions()
	opts.Model = name
	if change != nil {
		change(&opts)
	}
	cfg := runner.Config{
		Problems: problems[:n], Methods: ms, Options: opts,
		Deps: methods.Deps{Client: client, Sandbox: runnertest.Python(t), Clock: model.SystemClock},
	}
	if _, _, err := runner.Execute(context.Background(), cfg, out); err != nil {
		t.Fatal(err)
	}
}
