package framework

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func TestBinariesMissing(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if why := BinariesMissing(root); !strings.Contains(why, "bin/kube-apiserver is missing") {
		t.Errorf("empty bin/: %q, want kube-apiserver named", why)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "kube-apiserver"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if why := BinariesMissing(root); !strings.Contains(why, "bin/etcd is missing") {
		t.Errorf("no etcd: %q, want etcd named", why)
	}
	if err := os.WriteFile(filepath.Join(root, "bin", "etcd"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if why := BinariesMissing(root); why != "" {
		t.Errorf("both present: %q, want none", why)
	}
}

// TestConfigAsImpersonates: the impersonating configs act as the user or
// the ServiceAccount (with the groups the API server gives it), keep the
// admin's endpoint and limits, and leave the admin config alone.
func TestConfigAsImpersonates(t *testing.T) {
	admin := &rest.Config{Host: "https://127.0.0.1:6443", QPS: 500, Burst: 1000}
	f := &Framework{cfg: admin}
	tests := []struct {
		name string
		id   Identity
		want rest.ImpersonationConfig
	}{
		{"user", Identity{User: "alice", Groups: []string{"g"}, Impersonate: true}, rest.ImpersonationConfig{UserName: "alice", Groups: []string{"g"}}},
		{"service account", Identity{ServiceAccountNamespace: "ns", ServiceAccount: "repot", Impersonate: true}, rest.ImpersonationConfig{
			UserName: "system:serviceaccount:ns:repot",
			Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:ns", "system:authenticated"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := f.ConfigAs(context.Background(), tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Impersonate); diff != "" {
				t.Errorf("Impersonate (-want +got):\n%s", diff)
			}
			if cfg.Host != admin.Host || cfg.QPS != 500 || cfg.Burst != 1000 {
				t.Errorf("host, QPS, Burst = %s, %v, %d; want the admin's", cfg.Host, cfg.QPS, cfg.Burst)
			}
		})
	}
	if admin.Impersonate.UserName != "" {
		t.Errorf("the admin config was changed: %+v", admin.Impersonate)
	}
}

func TestConfigAsRejects(t *testing.T) {
	if _, err := (&Framework{}).ConfigAs(context.Background(), Identity{User: "a"}); err == nil {
		t.Error("ConfigAs before Init: no error")
	}
	f := &Framework{cfg: &rest.Config{Host: "https://127.0.0.1:6443"}}
	for _, id := range []Identity{{}, {User: "a", ServiceAccount: "b", ServiceAccountNamespace: "ns"}} {
		if _, err := f.ConfigAs(context.Background(), id); err == nil {
			t.Errorf("ConfigAs(%+v): no error, want one (a user or a ServiceAccount)", id)
		}
	}
}

// TestInitWithoutBinaries: Init says ErrBinariesMissing when bin/ lacks the
// control plane (run only then: otherwise it would start one).
func TestInitWithoutBinaries(t *testing.T) {
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if BinariesMissing(root) == "" {
		t.Skip("bin/ has the control plane; the envtest suites cover Init")
	}
	f := &Framework{}
	if _, err := f.Init(); !errors.Is(err, ErrBinariesMissing) {
		t.Errorf("Init() = %v, want ErrBinariesMissing", err)
	}
	if err := f.Teardown(); err != nil {
		t.Errorf("Teardown after a failed Init: %v", err)
	}
}
