package repot

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/runner/model"
)

func init() { register(newReadyCheckCommand) }

// newReadyCheckCommand is `repot ready-check`, the readiness sidecar of
// model server pods: vLLM's /health is green before the model answers, so
// readiness means one real completion has returned.
func newReadyCheckCommand() *cobra.Command {
	var (
		baseURL, modelName, listen, apiKeyEnv string
		g                                     readyGate
		noThink                               bool
	)
	cmd := &cobra.Command{
		Use:   "ready-check",
		Short: "Serve /readyz that turns 200 once the model server has answered a one-token completion",
		Long: "Serve /readyz (200 once a one-token chat completion against --base-url succeeded, 503 before or after\n" +
			"--failure-threshold consecutive failed re-checks) and /healthz (always 200). Checks run every\n" +
			"--initial-interval until the first success, then every --interval.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := g.checkFlags(); err != nil {
				return err
			}
			cfg := model.Config{BaseURL: baseURL, Model: modelName, Timeout: g.timeout, Retry: model.RetryPolicy{MaxAttempts: 1}}
			if apiKeyEnv != "" {
				cfg.APIKey = os.Getenv(apiKeyEnv)
			}
			if noThink {
				cfg.SystemPrefix = contract.NoThinkPrefix
				cfg.ExtraBody = model.DisableThinkingBody()
			}
			client, err := model.New(cfg)
			if err != nil {
				return err
			}
			g.client = client
			g.logf = log.New(c.ErrOrStderr(), "", log.LstdFlags).Printf
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			g.logf("ready-check: checking %s (model %s); serving /readyz and /healthz on %s", baseURL, modelName, ln.Addr())
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			hs := &http.Server{Handler: g.handler(), ReadHeaderTimeout: 10 * time.Second}
			go func() { <-ctx.Done(); _ = hs.Close() }()
			go g.loop(ctx)
			if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&baseURL, "base-url", "http://127.0.0.1:8000/v1", "OpenAI-compatible API root of the model server")
	f.StringVar(&modelName, "model", "", "served model id to ask")
	f.StringVar(&listen, "listen", "127.0.0.1:8081", "address to serve /readyz and /healthz on")
	f.StringVar(&apiKeyEnv, "api-key-env", "", "environment variable holding the API key (optional)")
	f.BoolVar(&noThink, "disable-thinking", true, "send the thinking-off system prefix and chat_template_kwargs")
	f.DurationVar(&g.interval, "interval", 30*time.Second, "time between checks once ready")
	f.DurationVar(&g.initialInterval, "initial-interval", 2*time.Second, "time between checks until the first success")
	f.DurationVar(&g.timeout, "timeout", 60*time.Second, "time limit of one check")
	f.IntVar(&g.failureThreshold, "failure-threshold", 3, "consecutive failed re-checks that make a ready server unready")
	_ = cmd.MarkFlagRequired("model")
	return cmd
}

// readyGate tracks whether the model server has answered.
type readyGate struct {
	client           model.Client
	interval         time.Duration
	initialInterval  time.Duration
	timeout          time.Duration
	failureThreshold int
	logf             func(string, ...any)
	// sleep waits between checks; nil means a timer honouring ctx.
	sleep func(ctx context.Context, d time.Duration) error

	mu       sync.Mutex
	ready    bool
	failures int
	lastErr  string
}

// checkFlags rejects settings that would make the gate spin or never pass.
func (g *readyGate) checkFlags() error {
	switch {
	case g.interval <= 0:
		return fmt.Errorf("--interval must be positive, got %v", g.interval)
	case g.initialInterval <= 0:
		return fmt.Errorf("--initial-interval must be positive, got %v", g.initialInterval)
	case g.timeout <= 0:
		return fmt.Errorf("--timeout must be positive, got %v", g.timeout)
	case g.failureThreshold < 1:
		return fmt.Errorf("--failure-threshold must be at least 1, got %d", g.failureThreshold)
	}
	return nil
}

// check asks for one token and updates the state.
func (g *readyGate) check(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	_, err := g.client.Complete(cctx, model.Request{
		Messages:  []contract.Message{{Role: contract.RoleUser, Content: "Reply with the single word OK."}},
		MaxTokens: 1,
	})
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		if !g.ready {
			g.logf("ready-check: the model answered; ready")
		}
		g.ready, g.failures, g.lastErr = true, 0, ""
		return
	}
	g.failures++
	g.lastErr = err.Error()
	if g.ready && g.failures >= max(g.failureThreshold, 1) {
		g.ready = false
		g.logf("ready-check: %d checks failed in a row; not ready: %v", g.failures, err)
	} else if !g.ready && g.failures%10 == 1 {
		g.logf("ready-check: not ready yet: %v", err)
	}
}

// loop checks until ctx ends.
func (g *readyGate) loop(ctx context.Context) {
	sleep := g.sleep
	if sleep == nil {
		sleep = model.SleepContext
	}
	for ctx.Err() == nil {
		g.check(ctx)
		g.mu.Lock()
		wait := g.initialInterval
		if g.ready {
			wait = g.interval
		}
		g.mu.Unlock()
		if sleep(ctx, wait) != nil {
			return
		}
	}
}

func (g *readyGate) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		g.mu.Lock()
		ready, last := g.ready, g.lastErr
		g.mu.Unlock()
		if ready {
			fmt.Fprintln(w, "ready")
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		if last == "" {
			last = "no completion yet"
		}
		fmt.Fprintln(w, "not ready:", last)
	})
	return mux
}
