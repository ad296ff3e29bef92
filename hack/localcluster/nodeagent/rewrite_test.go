package nodeagent

import "testing"

func TestPathMapRewrite(t *testing.T) {
	pm := newPathMap(map[string]string{
		"/repot/out":               "/s/pods/p/volumes/out",
		"/repot":                   "/s/pods/p/volumes/repot",
		"/etc/repot/config.yaml":   "/s/pods/p/volumes/cfg/config.yaml",
		"/var/run/secrets/ledger/": "/s/pods/p/volumes/token",
	})
	for _, tc := range []struct{ in, want string }{
		{"/repot/out", "/s/pods/p/volumes/out"},
		{"--out=/repot/out", "--out=/s/pods/p/volumes/out"},
		{"--out=/repot/out/records.jsonl", "--out=/s/pods/p/volumes/out/records.jsonl"},
		{"/repot/outer", "/s/pods/p/volumes/repot/outer"},
		{"/repot", "/s/pods/p/volumes/repot"},
		{"x/repot/out", "x/repot/out"},
		{"/workspace", "/workspace"},
		{"a=/repot/out,b=/repot", "a=/s/pods/p/volumes/out,b=/s/pods/p/volumes/repot"},
		{"cat /etc/repot/config.yaml; ls /repot", "cat /s/pods/p/volumes/cfg/config.yaml; ls /s/pods/p/volumes/repot"},
		{"/var/run/secrets/ledger/token", "/s/pods/p/volumes/token/token"},
		{"no paths here", "no paths here"},
	} {
		if got := pm.rewrite(tc.in); got != tc.want {
			t.Errorf("rewrite(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestRewriteAddresses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{":8000", "127.0.0.7:8000"},
		{"--listen=:8000", "--listen=127.0.0.7:8000"},
		{"--metrics-bind-address=0.0.0.0:8080", "--metrics-bind-address=127.0.0.7:8080"},
		{"[::]:9000", "127.0.0.7:9000"},
		{"--base-url=http://localhost:8000/v1", "--base-url=http://127.0.0.7:8000/v1"},
		{"http://127.0.0.1:8000/health", "http://127.0.0.7:8000/health"},
		{"--listen=127.0.0.3:8000", "--listen=127.0.0.3:8000"},
		{"http://sim.ns.svc:8000/v1", "http://sim.ns.svc:8000/v1"},
		{"mylocalhost:80", "mylocalhost:80"},
		{"8000", "8000"},
	} {
		if got := rewriteAddresses(tc.in, "127.0.0.7"); got != tc.want {
			t.Errorf("rewriteAddresses(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
