package v1alpha1_test

import (
	"context"
	"fmt"
	"testing"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
)

// TestEndpointURLRuleIsTheRunners applies an evaluation per URL through the
// real API server: the CRD accepts exactly the endpoint URLs the runner's
// --base-url check (contract.CheckBaseURL) accepts, so that none is taken
// at apply time to fail only in the runner's pod.
func TestEndpointURLRuleIsTheRunners(t *testing.T) {
	requireAPIServer(t)
	ns := newNamespace(t)
	for i, raw := range []string{
		"http://127.0.0.1:8000/v1",
		"https://api.example.com/v1",
		"http://vllm.team.svc.cluster.local:8000/v1",
		"http://[::1]:8000/v1",
		"http://h:65535/v1",
		"http://h:1",
		"http://",
		"https://:8000/v1",
		"http://exa mple.svc:8000/v1",
		"http://h:99999/v1",
		"http://h:0/v1",
		"http://h:123456789012345678901234567890/v1",
		"http://h:80a/v1",
		"http://h:00000/v1",
		"http://h:065535/v1",
		"http://h:08000/v1",
		"http://h/v1?x=1",
		"https://h/v1#part",
		"https://api.example.com#v1",
		"http://h:8000#x",
		"HTTP://h/v1",
		"http://localhost:1:8000/v1",
		"http://::1/v1",
		"http://[fd00::1]:8000/v1",
		"http://%zz/v1",
	} {
		t.Run(raw, func(t *testing.T) {
			e := revtesting.MakeEvaluation(fmt.Sprintf("url-%d", i), ns).Endpoint("m", raw, "served").Obj()
			apiErr := k8sClient.Create(context.Background(), e)
			runnerErr := contract.CheckBaseURL(raw)
			if (apiErr == nil) != (runnerErr == nil) {
				t.Errorf("the API server says %v, the runner's check %v", apiErr, runnerErr)
			}
		})
	}
}
