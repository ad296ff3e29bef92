package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// TestStatusEndpointHasNoCredentials: an endpoint URL's credentials
// (user:password@) never reach status.models[].server.endpoint, which anyone
// who may read the evaluation sees. The API refuses such URLs; this guards
// objects stored before that rule.
func TestStatusEndpointHasNoCredentials(t *testing.T) {
	cases := []struct{ url, want string }{
		{"https://user:secret@api.example.com/v1", "https://api.example.com/v1"},
		{"http://token@10.0.0.1:8000/v1?x=1", "http://10.0.0.1:8000/v1?x=1"},
		{"https://api.example.com/v1/@x", "https://api.example.com/v1/@x"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			e := revtesting.MakeEvaluation("ev", "ns").Endpoint("api", tc.url, "gpt").Obj()
			p := step(e, newWorld(), t0)
			if diff := cmp.Diff(tc.want, p.Status.Models[0].Server.Endpoint); diff != "" {
				t.Errorf("status endpoint (-want +got):\n%s", diff)
			}
		})
	}
	// A server model's endpoint is the operator's own URL, unchanged.
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	if got, want := step(e, newWorld(), t0).Status.Models[0].Server.Endpoint, build.ServerURL(e, &e.Spec.Models[0]); got != want {
		t.Errorf("simulated server's status endpoint %q, want %q", got, want)
	}
}
