package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"repot.dev/repot-operator/runner/methods"
	"repot.dev/repot-operator/runner/model"
)

// TestSignalsReadThroughTheModelTransport: the server's /metrics page is
// read through the model client's HTTP client, so it reaches the server
// however the calls reach it (a name only that client's dialer resolves
// here). With another client the name would not resolve, the controller
// would never get a reading, and the limit would never leave its start.
func TestSignalsReadThroughTheModelTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, `vllm:num_requests_running{model_name="m"} 3`)
		fmt.Fprintln(w, `vllm:generation_tokens_total{model_name="m"} 120`)
	}))
	defer srv.Close()
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	// The name exists only in this transport's dialer, as a Service name
	// exists only in the pod's cluster DNS.
	tr := model.NewTransport()
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if h, _, err := net.SplitHostPort(addr); err == nil && h == "m.evals.svc.cluster.local" {
			addr = net.JoinHostPort(host, port)
		}
		return d.DialContext(ctx, network, addr)
	}
	client, err := model.New(model.Config{
		BaseURL:    "http://m.evals.svc.cluster.local:" + port + "/v1",
		Model:      "m",
		HTTPClient: &http.Client{Transport: tr},
	})
	if err != nil {
		t.Fatal(err)
	}
	src := Config{Deps: methods.Deps{Client: client}}.signals()
	if src == nil {
		t.Fatal("no signals source for an OpenAI client")
	}
	sig, err := src.Read(context.Background())
	if err != nil {
		t.Fatalf("reading the metrics through the model transport: %v", err)
	}
	if sig.Running != 3 || sig.GenerationTokens != 120 {
		t.Errorf("signals %+v, want running 3 and 120 tokens", sig)
	}
}
