package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"repot.dev/repot-operator/runner/model"
)

// TestSignalsReadThroughTheModelTransport: the server's /metrics page is
// read through the model client's transport, so a Service name that only
// that transport resolves (the local cluster's hosts file) reaches the
// page as the calls reach the server. With Go's default transport the
// name does not resolve, the controller never gets a reading, and the
// limit never leaves its start.
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
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte(host+" m.evals.svc.cluster.local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := model.NewTransport()
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr.DialContext = model.HostsDialer(d.DialContext, func(k string) string {
		if k == model.HostsFileEnv {
			return hosts
		}
		return ""
	})
	client, err := model.New(model.Config{
		BaseURL:    "http://m.evals.svc.cluster.local:" + port + "/v1",
		Model:      "m",
		HTTPClient: &http.Client{Transport: tr},
	})
	if err != nil {
		t.Fatal(err)
	}
	src := Config{Deps: Deps{Client: client}}.signals()
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
