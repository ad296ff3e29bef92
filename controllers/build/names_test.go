package build

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestModelBase(t *testing.T) {
	long := strings.Repeat("e", 30)  // the longest evaluation name CEL allows
	model := strings.Repeat("m", 20) // the longest model name CEL allows
	cases := []struct {
		name      string
		eval, mdl string
		want      string
	}{
		{name: "short names are kept, with the pair's hash", eval: "ev", mdl: "qwen", want: "ev-qwen-" + pairHash("ev", "qwen")},
		{name: "a-b with c", eval: "a-b", mdl: "c", want: "a-b-c-" + pairHash("a-b", "c")},
		{name: "a with b-c", eval: "a", mdl: "b-c", want: "a-b-c-" + pairHash("a", "b-c")},
		{name: "the longest names are cut to 40", eval: long, mdl: model, want: long + "-" + pairHash(long, model)},
		{name: "a cut keeps what fits of the model", eval: strings.Repeat("e", 25), mdl: "ab-cdefgh", want: strings.Repeat("e", 25) + "-ab-cd-" + pairHash(strings.Repeat("e", 25), "ab-cdefgh")},
		{name: "a cut never ends the readable part with a dash", eval: strings.Repeat("e", 25), mdl: "abcd-fgh", want: strings.Repeat("e", 25) + "-abcd-" + pairHash(strings.Repeat("e", 25), "abcd-fgh")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ModelBase(tc.eval, tc.mdl)); diff != "" {
				t.Errorf("ModelBase(%q, %q) (-want +got):\n%s", tc.eval, tc.mdl, diff)
			}
			if n := len(ModelBase(tc.eval, tc.mdl)); n > maxBaseLen {
				t.Errorf("stem is %d characters, more than %d", n, maxBaseLen)
			}
		})
	}
}

// pairHash is the expected hash: the first 8 hex digits of SHA-256 of
// "eval/model", computed here with the standard tools.
func pairHash(eval, model string) string {
	return sha256Hex(eval + "/" + model)[:8]
}

func TestNamesOfPairsThatJoinAlikeDiffer(t *testing.T) {
	pairs := [][2]string{{"a-b", "c"}, {"a", "b-c"}}
	seen := map[string][2]string{}
	for _, p := range pairs {
		for _, n := range []string{ServerName(p[0], p[1]), RunnerJobName(p[0], p[1]), LedgerName(p[0], p[1], 0)} {
			if other, ok := seen[n]; ok {
				t.Errorf("%v and %v both name %q", other, p, n)
			}
			seen[n] = p
		}
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("e", 30)
	model := strings.Repeat("m", 20)
	cases := []struct {
		name       string
		eval, mdl  string
		wantServer string
	}{
		{name: "short names are kept", eval: "ev", mdl: "qwen", wantServer: "ev-qwen-" + pairHash("ev", "qwen") + "-server"},
		{name: "the longest names stay DNS labels", eval: long, mdl: model},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			names := []string{ServerName(tc.eval, tc.mdl), RunnerJobName(tc.eval, tc.mdl), LedgerName(tc.eval, tc.mdl, 63),
				RunnerJobName(tc.eval, tc.mdl) + "-63-abcde", RunnerAccessName(tc.eval),
				// a server pod: Deployment name, ReplicaSet hash, pod suffix
				ServerName(tc.eval, tc.mdl) + "-5d4f8b7c9d-abcde"}
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
	// Names of different long inputs differ.
	if ModelBase(long, model) == ModelBase(long, model[:19]+"n") {
		t.Errorf("different long inputs share a name")
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
