package repot

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"repot.dev/repot-operator/modelserver/simserver"
	"repot.dev/repot-operator/runner/model"
)

// flakyClient fails while fail is true.
type flakyClient struct{ fail bool }

func (c *flakyClient) Complete(_ context.Context, req model.Request) (model.Response, error) {
	if req.MaxTokens != 1 {
		return model.Response{}, errors.New("readiness must ask for one token")
	}
	if c.fail {
		return model.Response{}, &model.InfraError{Cause: errors.New("connection refused"), Attempts: 1}
	}
	return model.Response{Content: "OK", FinishReason: "length"}, nil
}

func status(t *testing.T, h http.Handler, path string) int {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code
}

func TestReadyGateTransitions(t *testing.T) {
	c := &flakyClient{fail: true}
	g := &readyGate{client: c, timeout: time.Second, failureThreshold: 2, logf: t.Logf}
	h := g.handler()
	steps := []struct {
		fail      bool
		wantReady int
	}{
		{true, 503},  // never answered
		{true, 503},  // still not
		{false, 200}, // first answer
		{true, 200},  // one failed re-check is tolerated
		{false, 200}, // and forgotten
		{true, 200},
		{true, 503}, // two in a row: unready
		{false, 200},
	}
	for i, s := range steps {
		c.fail = s.fail
		g.check(context.Background())
		if got := status(t, h, "/readyz"); got != s.wantReady {
			t.Errorf("step %d: /readyz %d, want %d", i, got, s.wantReady)
		}
		if got := status(t, h, "/healthz"); got != 200 {
			t.Errorf("step %d: /healthz %d", i, got)
		}
	}
}

func TestReadyGateLoopAgainstSimServer(t *testing.T) {
	srv, err := simserver.New(simserver.Options{Profile: simserver.Profiles["weak"], Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	client, err := model.New(model.Config{BaseURL: hs.URL + "/v1", Model: "sim-weak", Retry: model.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var waits []time.Duration
	g := &readyGate{client: client, interval: 30 * time.Second, initialInterval: 2 * time.Second, timeout: 5 * time.Second,
		failureThreshold: 3, logf: t.Logf,
		sleep: func(ctx context.Context, d time.Duration) error {
			waits = append(waits, d)
			if len(waits) == 2 {
				cancel()
			}
			return ctx.Err()
		}}
	g.loop(ctx)
	if got := status(t, g.handler(), "/readyz"); got != 200 {
		t.Errorf("/readyz %d after the simulated server answered", got)
	}
	if len(waits) != 2 || waits[0] != 30*time.Second {
		t.Errorf("waits %v, want the ready interval", waits)
	}
}

func TestSimServerCommandRejectsUnknownProfile(t *testing.T) {
	cmd := newSimServerCommand()
	cmd.SetArgs([]string{"--profile", "genius", "--listen", "127.0.0.1:0"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); err == nil {
		t.Error("unknown profile accepted")
	}
}

// TestReadyCheckCommandRejectsBadFlags: a zero interval would make the
// checks spin, a zero timeout would make every check fail.
func TestReadyCheckCommandRejectsBadFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "0s"}, "--interval must be positive"},
		{[]string{"--initial-interval", "-1s"}, "--initial-interval must be positive"},
		{[]string{"--timeout", "0s"}, "--timeout must be positive"},
		{[]string{"--failure-threshold", "0"}, "--failure-threshold must be at least 1"},
	}
	for _, tc := range tests {
		cmd := newReadyCheckCommand()
		cmd.SetArgs(append([]string{"--model", "m", "--listen", "127.0.0.1:0"}, tc.args...))
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		// Without the check the command would serve until ctx ends.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := cmd.ExecuteContext(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ready-check %v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}
