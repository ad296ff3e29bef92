package ledger

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRestConfigUsesTokenFile(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	ca := filepath.Join(dir, "ca.crt")
	for _, p := range []string{token, ca} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	cfg, err := RestConfig(ClientOptions{TokenFile: token, CAFile: ca}, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://10.0.0.1:443" || cfg.BearerTokenFile != token || cfg.TLSClientConfig.CAFile != ca {
		t.Errorf("config = host %q token %q ca %q", cfg.Host, cfg.BearerTokenFile, cfg.TLSClientConfig.CAFile)
	}

	cfg, err = RestConfig(ClientOptions{TokenFile: token, Server: "https://127.0.0.1:6443"}, func(string) string { return "" })
	if err != nil || cfg.Host != "https://127.0.0.1:6443" {
		t.Errorf("--server: host %v, err %v", cfg, err)
	}

	if _, err := RestConfig(ClientOptions{TokenFile: token, CAFile: filepath.Join(dir, "missing")}, func(k string) string { return env[k] }); err == nil {
		t.Error("a missing --ca-file was accepted")
	}
}

func TestRestConfigFallsBackToKubeconfig(t *testing.T) {
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	data := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://example.test:6443"}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(kc, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	// The token file does not exist, so the kubeconfig is used.
	cfg, err := RestConfig(ClientOptions{TokenFile: filepath.Join(t.TempDir(), "none"), Kubeconfig: kc},
		func(k string) string {
			return map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}[k]
		})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://example.test:6443" || cfg.BearerToken != "abc" {
		t.Errorf("config = host %q token %q; want the kubeconfig's", cfg.Host, cfg.BearerToken)
	}
}
