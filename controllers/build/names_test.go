package build

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("e", 30)
	model := strings.Repeat("m", 20)
	cases := []struct {
		name       string
		eval, mdl  string
		wantServer string
	}{
		{name: "short names are kept", eval: "ev", mdl: "qwen", wantServer: "ev-qwen-server"},
		{name: "the longest names stay DNS labels", eval: long, mdl: model},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{ServerName(tc.eval, tc.mdl), RunnerJobName(tc.eval, tc.mdl), LedgerName(tc.eval, tc.mdl, 63),
				RunnerJobName(tc.eval, tc.mdl) + "-63-abcde", RunnerAccessName(tc.eval)}
			for _, n := range names {
				if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
					t.Errorf("%q: %v", n, errs)
				}
			}
			if tc.wantServer != "" && names[0] != tc.wantServer {
				t.Errorf("server name = %q, want %q", names[0], tc.wantServer)
			}
			if ServerName(tc.eval, tc.mdl) != names[0] {
				t.Errorf("names are not deterministic")
			}
		})
	}
	// Shortened names of different inputs differ.
	if ModelBase(long, model) == ModelBase(long, model[:19]+"n") {
		t.Errorf("different long inputs share a name")
	}
}
