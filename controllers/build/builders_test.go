package build

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
)

func TestRunArgs(t *testing.T) {
	cases := []struct {
		name string
		eval *repotv1.RepotEvaluation
		want []string
	}{{
		name: "simulated model with defaults",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		want: []string{"run", "--suite", "open-source-120", "--methods", "pot,pot-retry,repot,repot-adaptive",
			"--base-url", "http://" + ServerName("ev", "m") + ".ns.svc:8000/v1", "--model", "m", "--model-label", "m",
			"--shard-index=$(JOB_COMPLETION_INDEX)", "--shard-count", "4", "--concurrency", "16",
			"--repair-budget", "1", "--adaptive-threshold-permille", "150", "--temperature", "0", "--max-tokens", "16384",
			"--disable-thinking=true", "--out", "/repot/out", "--resume"},
	}, {
		name: "endpoint with key, problems ConfigMap, artifacts and settings",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("api", "https://x/v1", "gpt").APIKeySecret("k", "").
			Suite(repotv1.SuitePlanBench378).ProblemsConfigMap("pb", "pb.jsonl").Methods(repotv1.MethodRePoT).
			Shards(2).InFlight(8).RepairBudget(2).ShortPrefixPermille(200).Temperature("0.7").MaxTokens(4096).
			DisableThinking(false).ArtifactsPVC("traces").Obj(),
		want: []string{"run", "--suite", "planbench-378", "--problems", "/repot/problems/pb.jsonl", "--methods", "repot",
			"--base-url", "https://x/v1", "--model", "gpt", "--model-label", "api",
			"--shard-index=$(JOB_COMPLETION_INDEX)", "--shard-count", "2", "--concurrency", "8",
			"--repair-budget", "2", "--adaptive-threshold-permille", "200", "--temperature", "0.7", "--max-tokens", "4096",
			"--disable-thinking=false", "--out", "/repot/out", "--resume", "--api-key-env", "REPOT_API_KEY",
			"--traces", "/repot/artifacts/api-shard-$(JOB_COMPLETION_INDEX).jsonl"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, RunArgs(tc.eval, &tc.eval.Spec.Models[0])); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunnerPodSecurity checks the runner pod's isolation: only the ledger
// containers see the token, every container is restricted.
func TestRunnerPodSecurity(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	pod := runnerPod(ev, &ev.Spec.Models[0], testOpts)
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("token automounted")
	}
	var withToken []string
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		for _, m := range c.VolumeMounts {
			if m.Name == "ledger-token" {
				withToken = append(withToken, c.Name)
			}
		}
		sc := c.SecurityContext
		if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !*sc.RunAsNonRoot ||
			!slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
			t.Errorf("container %s is not restricted: %+v", c.Name, sc)
		}
	}
	if diff := cmp.Diff([]string{"ledger-restore", "ledger-sync"}, withToken); diff != "" {
		t.Errorf("containers with the token (-want +got):\n%s", diff)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy = %s, podFailurePolicy needs Never", pod.RestartPolicy)
	}
	sync := pod.InitContainers[1]
	if sync.RestartPolicy == nil || *sync.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Errorf("ledger-sync is not a native sidecar")
	}
	if !slices.Contains(sync.Args, "--configmap="+LedgerPrefix("ev", "m")+"$(JOB_COMPLETION_INDEX)") {
		t.Errorf("ledger-sync args %v do not name the shard's ledger", sync.Args)
	}
}

func TestRunnerNetworkPolicy(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
		Endpoint("api", "https://api.example.com/v1", "gpt").ProblemsURL("http://10.0.0.9/p.jsonl").Obj()
	cases := []struct {
		name string
		opts Options
		api  []string
	}{
		{name: "API server anywhere on 443/6443", opts: testOpts},
		{name: "API server CIDRs", opts: Options{APIServerCIDRs: []string{"10.96.0.1/32"}}, api: []string{"10.96.0.1/32"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := RunnerNetworkPolicy(ev, tc.opts)
			type rule struct {
				To    []string
				Ports []string
			}
			var got []rule
			for _, e := range np.Spec.Egress {
				var r rule
				for _, p := range e.To {
					switch {
					case p.PodSelector != nil:
						r.To = append(r.To, "pods:"+p.PodSelector.MatchLabels[LabelModel])
					case p.IPBlock != nil:
						r.To = append(r.To, p.IPBlock.CIDR)
					}
				}
				for _, p := range e.Ports {
					r.Ports = append(r.Ports, string(*p.Protocol)+"/"+p.Port.String())
				}
				got = append(got, r)
			}
			want := []rule{
				{Ports: []string{"UDP/53", "TCP/53"}},
				{To: []string{"pods:m"}, Ports: []string{"TCP/8000"}},
				{Ports: []string{"TCP/443"}},
				{To: []string{"10.0.0.9/32"}, Ports: []string{"TCP/80"}},
				{To: tc.api, Ports: []string{"TCP/443", "TCP/6443"}},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("egress (-want +got):\n%s", diff)
			}
			if len(np.Spec.Ingress) != 0 || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
				t.Errorf("ingress is not denied")
			}
		})
	}
}

func TestRunnerRole(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "s", 1).Simulated("b", "s", 2).Shards(2).Obj()
	r := RunnerRole(ev)
	want := []string{LedgerName("ev", "a", 0), LedgerName("ev", "a", 1), LedgerName("ev", "b", 0), LedgerName("ev", "b", 1)}
	if len(r.Rules) != 1 {
		t.Fatalf("rules = %d, want 1", len(r.Rules))
	}
	if diff := cmp.Diff(want, r.Rules[0].ResourceNames); diff != "" {
		t.Errorf("resourceNames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"get", "update", "patch"}, r.Rules[0].Verbs); diff != "" {
		t.Errorf("verbs (-want +got):\n%s", diff)
	}
}

func TestServerPods(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("q", "Qwen/Qwen3-8B").GPUProduct("NVIDIA-A100-SXM4-80GB").
		Simulated("s", "weak", 3).Endpoint("e", "http://x/v1", "m").Obj()
	vllm := ServerDeployment(ev, &ev.Spec.Models[0], testOpts, 1)
	if got := vllm.Spec.Template.Spec.NodeSelector[repotv1.GPUProductLabel]; got != "NVIDIA-A100-SXM4-80GB" {
		t.Errorf("product selector = %q", got)
	}
	sim := ServerDeployment(ev, &ev.Spec.Models[1], testOpts, 0)
	if *sim.Spec.Replicas != 0 {
		t.Errorf("replicas = %d, want 0", *sim.Spec.Replicas)
	}
	if len(sim.Spec.Template.Spec.NodeSelector) != 0 || len(sim.Spec.Template.Spec.Tolerations) != 0 {
		t.Errorf("simulated server is pinned to GPU nodes")
	}
	if ServerDeployment(ev, &ev.Spec.Models[2], testOpts, 1) != nil {
		t.Errorf("endpoint model got a server")
	}
	for _, d := range []*corev1.PodSpec{&vllm.Spec.Template.Spec, &sim.Spec.Template.Spec} {
		rc := d.Containers[1]
		if rc.Name != "ready-check" || rc.ReadinessProbe == nil || rc.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Errorf("no readiness sidecar: %+v", rc)
		}
	}
}
