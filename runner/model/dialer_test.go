package model

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeHosts(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLookupHostsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	writeHosts(t, path, "# comment\n127.0.0.1 localhost\n\n127.0.0.7  sim.repot.svc sim.repot.svc.cluster.local # pod\nnot-an-ip name\n10.0.0.1 dup\n10.0.0.2 dup\n::1 v6host\n")
	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"sim.repot.svc", "127.0.0.7", true},
		{"SIM.Repot.SVC.", "127.0.0.7", true},
		{"sim.repot.svc.cluster.local", "127.0.0.7", true},
		{"dup", "10.0.0.1", true},
		{"v6host", "::1", true},
		{"name", "", false},
		{"pod", "", false},
		{"absent", "", false},
	}
	for _, tc := range tests {
		got, ok := LookupHostsFile(path, tc.name)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("LookupHostsFile(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.wantOK)
		}
	}
	if _, ok := LookupHostsFile(filepath.Join(t.TempDir(), "missing"), "x"); ok {
		t.Error("missing file resolved a name")
	}
}

func TestHostsDialerRereadsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	var dialed []string
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return nil, nil
	}
	env := map[string]string{HostsFileEnv: path}
	d := HostsDialer(dial, func(k string) string { return env[k] })
	writeHosts(t, path, "127.0.0.5 model.ns.svc\n")
	_, _ = d(context.Background(), "tcp", "model.ns.svc:8000")
	writeHosts(t, path, "127.0.0.6 model.ns.svc\n")
	_, _ = d(context.Background(), "tcp", "model.ns.svc:8000")
	_, _ = d(context.Background(), "tcp", "other.example:443")
	_, _ = d(context.Background(), "tcp", "10.1.2.3:80")
	env = map[string]string{}
	_, _ = d(context.Background(), "tcp", "model.ns.svc:8000")
	want := []string{"127.0.0.5:8000", "127.0.0.6:8000", "other.example:443", "10.1.2.3:80", "model.ns.svc:8000"}
	if len(dialed) != len(want) {
		t.Fatalf("dialed %v, want %v", dialed, want)
	}
	for i := range want {
		if dialed[i] != want[i] {
			t.Errorf("dial %d = %s, want %s", i, dialed[i], want[i])
		}
	}
}

// TestClientUsesHostsFile calls a real server by a name that only the hosts
// file knows.
func TestClientUsesHostsFile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(ok))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	path := filepath.Join(t.TempDir(), "hosts")
	writeHosts(t, path, "127.0.0.1 sim-weak.repot-demo.svc\n")
	t.Setenv(HostsFileEnv, path)
	c, err := New(Config{
		BaseURL: "http://sim-weak.repot-demo.svc:" + port + "/v1",
		Model:   "m",
		Retry:   RetryPolicy{MaxAttempts: 1},
		Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatalf("Complete through hosts file: %v", err)
	}
	if resp.Content == "" {
		t.Error("empty content")
	}
}

// A cluster Service name missing from the hosts file must not reach the
// host's DNS resolver (on the local cluster that may be a private-range
// address); other names still fall back to normal resolution.
func TestHostsDialerKeepsClusterNamesOffHostDNS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hosts")
	writeHosts(t, path, "127.0.0.5 model.ns.svc\n")
	var dialed []string
	dial := func(_ context.Context, _, addr string) (net.Conn, error) {
		dialed = append(dialed, addr)
		return nil, nil
	}
	d := HostsDialer(dial, func(k string) string { return map[string]string{HostsFileEnv: path}[k] })
	for _, addr := range []string{"gone.ns.svc:8000", "Gone.NS.svc.cluster.local.:8000"} {
		_, err := d(context.Background(), "tcp", addr)
		var dnsErr *net.DNSError
		if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			t.Errorf("dial %s: err = %v, want a not-found DNS error", addr, err)
		}
	}
	_, _ = d(context.Background(), "tcp", "api.example.com:443")
	_, _ = d(context.Background(), "tcp", "service.example:443")
	want := []string{"api.example.com:443", "service.example:443"}
	if len(dialed) != len(want) || dialed[0] != want[0] || dialed[1] != want[1] {
		t.Errorf("dialed %v, want %v", dialed, want)
	}
}
