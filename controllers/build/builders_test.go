package build

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

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
			"--shard-index=$(JOB_COMPLETION_INDEX)", "--shard-count", "4", "--concurrency", "64",
			"--repair-budget", "1", "--adaptive-threshold-permille", "150", "--temperature", "0", "--max-tokens", "16384",
			"--disable-thinking=true", "--out", "/repot/out", "--resume", "--await-ledger=2m"},
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
			"--disable-thinking=false", "--out", "/repot/out", "--resume", "--await-ledger=2m", "--api-key-env", "REPOT_API_KEY",
			"--traces", "/repot/artifacts/api-shard-$(JOB_COMPLETION_INDEX).jsonl"},
	}, {
		name: "repot-vrr with spec.vrr (unset fields left to the engine)",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
			Methods(repotv1.MethodRePoT, repotv1.MethodVRR).RepairBudget(5).VRR(repotv1.VRRSpec{
			Tau: ptr.To[int32](50), Votes: ptr.To[int32](3),
			VerifierNoise:  &repotv1.VerifierNoiseSpec{FalseAcceptPermille: ptr.To[int32](100), FalseRejectPermille: ptr.To[int32](0)},
			GuardJPermille: ptr.To[int32](-1),
		}).Obj(),
		want: []string{"run", "--suite", "open-source-120", "--methods", "repot,repot-vrr",
			"--base-url", "http://" + ServerName("ev", "m") + ".ns.svc:8000/v1", "--model", "m", "--model-label", "m",
			"--shard-index=$(JOB_COMPLETION_INDEX)", "--shard-count", "4", "--concurrency", "64",
			"--repair-budget", "5", "--adaptive-threshold-permille", "150", "--temperature", "0", "--max-tokens", "16384",
			"--disable-thinking=true", "--out", "/repot/out", "--resume", "--await-ledger=2m",
			"--vrr-tau=50", "--vrr-votes=3", "--verifier-false-accept-permille=100", "--verifier-false-reject-permille=0",
			"--vrr-guard-j-permille=-1"},
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

// Peers and ports of the NetworkPolicy tests.
var (
	tcpP, udpP = corev1.ProtocolTCP, corev1.ProtocolUDP
	anywhereTo = []networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"169.254.0.0/16", "100.100.100.200/32"}}},
		{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{"fe80::/10", "fd00:ec2::254/128", "fd20:ce::254/128"}}},
	}
	kubeDNSTo = []networkingv1.NetworkPolicyPeer{{
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "kube-system"}},
		PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"k8s-app": "kube-dns"}},
	}}
)

func ports(specs ...string) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for _, s := range specs {
		proto, n, _ := strings.Cut(s, "/")
		p := corev1.Protocol(proto)
		v := intstr.Parse(n)
		out = append(out, networkingv1.NetworkPolicyPort{Protocol: &p, Port: &v})
	}
	return out
}

func ipTo(cidrs ...string) []networkingv1.NetworkPolicyPeer {
	var out []networkingv1.NetworkPolicyPeer
	for _, c := range cidrs {
		out = append(out, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	return out
}

func podsTo(labels map[string]string) []networkingv1.NetworkPolicyPeer {
	return []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: labels}}}
}

func TestRunnerNetworkPolicy(t *testing.T) {
	dns := networkingv1.NetworkPolicyEgressRule{To: kubeDNSTo, Ports: ports("UDP/53", "TCP/53", "UDP/dns", "TCP/dns-tcp")}
	server := networkingv1.NetworkPolicyEgressRule{To: podsTo(ServerSelector("ev", "m")), Ports: ports("TCP/8000")}
	api := func(to []networkingv1.NetworkPolicyPeer) networkingv1.NetworkPolicyEgressRule {
		return networkingv1.NetworkPolicyEgressRule{To: to, Ports: ports("TCP/443", "TCP/6443")}
	}
	cases := []struct {
		name string
		eval *repotv1.RepotEvaluation
		opts Options
		want []networkingv1.NetworkPolicyEgressRule
	}{{
		name: "server model, API server unknown: no API server rule (fails closed)",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		opts: testOpts,
		want: []networkingv1.NetworkPolicyEgressRule{dns, server},
	}, {
		name: "S3 store: its host and port, anywhere but link-local",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
			ArtifactsS3(repotv1.S3Store{Endpoint: "minio.storage.svc:9000", Bucket: "traces", Insecure: true}).Obj(),
		opts: testOpts,
		want: []networkingv1.NetworkPolicyEgressRule{dns, server, {To: anywhereTo, Ports: ports("TCP/9000")}},
	}, {
		name: "the operator's default store, TLS",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		opts: Options{DefaultS3: &repotv1.S3Store{Endpoint: "10.0.0.5", Bucket: "traces"}},
		want: []networkingv1.NetworkPolicyEgressRule{dns, server, {To: ipTo("10.0.0.5/32"), Ports: ports("TCP/443")}},
	}, {
		name: "API server CIDRs",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		opts: Options{APIServerCIDRs: []string{"10.96.0.1/32", "fd00::1/128"}},
		want: []networkingv1.NetworkPolicyEgressRule{dns, server, api(ipTo("10.96.0.1/32", "fd00::1/128"))},
	}, {
		name: "hostname endpoint anywhere but link-local, IP problems URL exactly",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).
			Endpoint("api", "https://api.example.com/v1", "gpt").ProblemsURL("http://10.0.0.9/p.jsonl").Obj(),
		opts: testOpts,
		want: []networkingv1.NetworkPolicyEgressRule{
			dns, server,
			{To: anywhereTo, Ports: ports("TCP/443")},
			{To: ipTo("10.0.0.9/32"), Ports: ports("TCP/80")},
		},
	}, {
		name: "hostname endpoint with a port, IPv6 literal",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("api", "http://llm.internal:8080/v1", "gpt").
			ProblemsURL("https://[fd00::9]:8443/p.jsonl").Obj(),
		opts: testOpts,
		want: []networkingv1.NetworkPolicyEgressRule{
			dns,
			{To: anywhereTo, Ports: ports("TCP/8080")},
			{To: ipTo("fd00::9/128"), Ports: ports("TCP/8443")},
		},
	}, {
		name: "a metadata or link-local address gets no rule",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("api", "http://169.254.169.254/v1", "gpt").
			ProblemsURL("http://[fe80::1]/p.jsonl").Obj(),
		opts: testOpts,
		want: []networkingv1.NetworkPolicyEgressRule{dns},
	}, {
		name: "Alibaba Cloud's and GCP's IPv6 metadata addresses get no rule",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("api", "http://100.100.100.200/v1", "gpt").
			ProblemsURL("http://[fd20:ce::254]/p.jsonl").Obj(),
		opts: testOpts,
		want: []networkingv1.NetworkPolicyEgressRule{dns},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := RunnerNetworkPolicy(tc.eval, tc.opts)
			if diff := cmp.Diff(tc.want, np.Spec.Egress); diff != "" {
				t.Errorf("egress (-want +got):\n%s", diff)
			}
			if len(np.Spec.Ingress) != 0 || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) {
				t.Errorf("ingress is not denied")
			}
			for _, r := range np.Spec.Egress {
				if len(r.To) == 0 {
					t.Errorf("egress rule %v has no peers: it allows every address", r)
				}
			}
		})
	}
}

// TestServerNetworkPolicy checks who may reach the server pods (the
// evaluation's runners, its servers' own readiness sidecars and a configured
// metrics scraper, never the operator's pod labels, which an author can set
// through spec.placement.labels) and where the server pods may go (their own
// server port; DNS and HTTPS anywhere but metadata only with a vLLM model).
func TestServerNetworkPolicy(t *testing.T) {
	sim := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Simulated("b", "strong", 1).Obj()
	withVLLM := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).VLLM("q", "Qwen/Qwen3-8B").Obj()
	evServers := map[string]string{LabelEvaluation: "ev", LabelComponent: ComponentServer}
	runners := networkingv1.NetworkPolicyIngressRule{
		From:  podsTo(map[string]string{LabelEvaluation: "ev", LabelComponent: ComponentRunner}),
		Ports: ports("TCP/8000", "TCP/9400"),
	}
	servers := networkingv1.NetworkPolicyIngressRule{From: podsTo(evServers), Ports: ports("TCP/8000")}
	monitoring := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}
	prometheus := &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "prometheus"}}
	toOwnServers := networkingv1.NetworkPolicyEgressRule{To: podsTo(evServers), Ports: ports("TCP/8000")}
	dns := networkingv1.NetworkPolicyEgressRule{To: kubeDNSTo, Ports: ports("UDP/53", "TCP/53", "UDP/dns", "TCP/dns-tcp")}
	hub := networkingv1.NetworkPolicyEgressRule{To: anywhereTo, Ports: ports("TCP/443")}
	cases := []struct {
		name    string
		eval    *repotv1.RepotEvaluation
		opts    Options
		ingress []networkingv1.NetworkPolicyIngressRule
		egress  []networkingv1.NetworkPolicyEgressRule
	}{{
		name:    "simulated servers: runners and servers in, own servers out",
		eval:    sim,
		opts:    testOpts,
		ingress: []networkingv1.NetworkPolicyIngressRule{runners, servers},
		egress:  []networkingv1.NetworkPolicyEgressRule{toOwnServers},
	}, {
		name: "a metrics scraper",
		eval: sim,
		opts: Options{MetricsScraper: MetricsScraper{NamespaceSelector: monitoring, PodSelector: prometheus}},
		ingress: []networkingv1.NetworkPolicyIngressRule{
			runners, servers,
			{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: monitoring, PodSelector: prometheus}}, Ports: ports("TCP/8000", "TCP/9400")},
		},
		egress: []networkingv1.NetworkPolicyEgressRule{toOwnServers},
	}, {
		name:    "a vLLM server: DNS and HTTPS to the model hub, never metadata",
		eval:    withVLLM,
		opts:    testOpts,
		ingress: []networkingv1.NetworkPolicyIngressRule{runners, servers},
		egress:  []networkingv1.NetworkPolicyEgressRule{toOwnServers, dns, hub},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := ServerNetworkPolicy(tc.eval, tc.opts)
			if diff := cmp.Diff(tc.ingress, np.Spec.Ingress); diff != "" {
				t.Errorf("ingress (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.egress, np.Spec.Egress); diff != "" {
				t.Errorf("egress (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(evServers, np.Spec.PodSelector.MatchLabels); diff != "" {
				t.Errorf("pod selector (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes); diff != "" {
				t.Errorf("policy types (-want +got):\n%s", diff)
			}
			if np.Name != "ev-servers" || metav1.GetControllerOf(np).Name != "ev" {
				t.Errorf("name %q, owner %v: want ev-servers owned by ev", np.Name, metav1.GetControllerOf(np))
			}
			for _, r := range np.Spec.Egress {
				if len(r.To) == 0 {
					t.Errorf("egress rule %v has no peers: it allows every address", r)
				}
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
	// Get and patch are all the ledger store calls (ledger.ConfigMapClient).
	if diff := cmp.Diff([]string{"get", "patch"}, r.Rules[0].Verbs); diff != "" {
		t.Errorf("verbs (-want +got):\n%s", diff)
	}
}

// TestRunnerRoleNamesSpills: an evaluation whose shards need spill
// ConfigMaps gets get and patch on exactly its ledgers and their spills,
// the ConfigMaps LedgerConfigMaps creates, and still no create.
func TestRunnerRoleNamesSpills(t *testing.T) {
	// 775 problems x 4 methods / 2 shards = 1550 runs of up to 2048 bytes:
	// 3.2 MB, the ledger and 3 spills per shard.
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "s", 1).Suite(repotv1.SuitePuzzleZoo775).Shards(2).Obj()
	if got := LedgerSpills(ev); got != 3 {
		t.Fatalf("LedgerSpills = %d, want 3", got)
	}
	var want []string
	for s := range 2 {
		l := LedgerName("ev", "a", s)
		want = append(want, l, l+"-1", l+"-2", l+"-3")
	}
	r := RunnerRole(ev)
	if diff := cmp.Diff(want, r.Rules[0].ResourceNames); diff != "" {
		t.Errorf("resourceNames (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"get", "patch"}, r.Rules[0].Verbs); diff != "" {
		t.Errorf("verbs (-want +got):\n%s", diff)
	}
	var created []string
	for _, cm := range LedgerConfigMaps(ev, &ev.Spec.Models[0]) {
		created = append(created, cm.Name)
		if cm.Labels[LabelShard] == "" || cm.Labels[LabelComponent] != ComponentLedger {
			t.Errorf("%s lacks the ledger labels: %v", cm.Name, cm.Labels)
		}
	}
	if diff := cmp.Diff(want, created); diff != "" {
		t.Errorf("ledger ConfigMaps (-want +got):\n%s", diff)
	}
	args := RunnerJob(ev, &ev.Spec.Models[0], testOpts, false).Spec.Template.Spec.InitContainers[1].Args
	if !slices.Contains(args, "--spills=3") {
		t.Errorf("ledger-sync args %v lack --spills=3", args)
	}
}

func TestLedgerSpills(t *testing.T) {
	tests := []struct {
		name string
		ev   *repotv1.RepotEvaluation
		want int
	}{
		{"default open-source-120: 120 runs per shard", revtesting.MakeEvaluation("ev", "ns").Simulated("a", "s", 1).Obj(), 0},
		{"puzzlezoo-775 at 1938 runs per shard", revtesting.MakeEvaluation("ev", "ns").Simulated("a", "s", 1).Suite(repotv1.SuitePuzzleZoo775).
			Methods(repotv1.MethodPoT, repotv1.MethodPoTRetry, repotv1.MethodRePoT, repotv1.MethodAdaptive, repotv1.MethodRePoTNoPrefix).Shards(2).Obj(), 3},
		{"rounds at 1400 runs per shard", revtesting.MakeEvaluation("ev", "ns").Simulated("a", "s", 1).Suite(repotv1.SuitePuzzleZoo775).
			Methods(repotv1.MethodPoT, repotv1.MethodVRR, repotv1.MethodRePoT, repotv1.MethodAdaptive, repotv1.MethodRePoTNoPrefix).Shards(3).Obj(), 3},
		{"custom problems of unknown count: the CRD's bound", revtesting.MakeEvaluation("ev", "ns").Simulated("a", "s", 1).ProblemsURL("https://x/p.jsonl").Obj(), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LedgerSpills(tt.ev); got != tt.want {
				t.Errorf("LedgerSpills = %d, want %d (runs per shard %d)", got, tt.want, RunsPerShard(tt.ev))
			}
		})
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

// TestRunnerPodEmptyDirsAreBounded: every emptyDir of a runner pod has a
// size limit, so that neither the records and traces nor a program's files
// can fill the node's disk; past it the kubelet evicts the pod.
func TestRunnerPodEmptyDirsAreBounded(t *testing.T) {
	for _, ev := range []*repotv1.RepotEvaluation{
		revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).ArtifactsPVC("traces").ProblemsConfigMap("pb", "").Obj(),
	} {
		pod := runnerPod(ev, &ev.Spec.Models[0], testOpts)
		sizes := map[string]string{}
		for _, v := range pod.Volumes {
			if v.EmptyDir == nil {
				continue
			}
			if v.EmptyDir.SizeLimit == nil {
				t.Errorf("emptyDir %s has no size limit", v.Name)
				continue
			}
			sizes[v.Name] = v.EmptyDir.SizeLimit.String()
		}
		if diff := cmp.Diff(map[string]string{"out": "4Gi", "tmp": "1Gi"}, sizes); diff != "" {
			t.Errorf("emptyDir size limits (-want +got):\n%s", diff)
		}
	}
}

func TestWithoutCredentials(t *testing.T) {
	for raw, want := range map[string]string{
		"https://user:secret@api.example.com/v1": "https://api.example.com/v1",
		"https://token@[fd00::1]:8443/v1":        "https://[fd00::1]:8443/v1",
		"https://api.example.com/v1/@x":          "https://api.example.com/v1/@x",
		"http://x.ns.svc:8000/v1":                "http://x.ns.svc:8000/v1",
		"http://user:secret@[::1":                "", // does not parse: nothing of it
	} {
		if got := WithoutCredentials(raw); got != want {
			t.Errorf("WithoutCredentials(%q) = %q, want %q", raw, got, want)
		}
	}
}

// TestVLLMDefaultResources: a vLLM server without spec.models[].vllm.resources
// gets the operator's defaults, sized per GPU for vLLM's host side, and
// every container of its pod has cpu and memory requests and a memory
// limit, so that a namespace ResourceQuota on them admits it; resources set
// in the spec are taken as they are.
func TestVLLMDefaultResources(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("q", "Qwen/Qwen3-8B").GPUs(2).
		VLLMWith("r", repotv1.VLLMModel{Model: "org/m", Resources: &repotv1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}).Obj()
	d := ServerDeployment(ev, &ev.Spec.Models[0], testOpts, 1)
	got := d.Spec.Template.Spec.Containers[0].Resources
	want := map[corev1.ResourceName]string{corev1.ResourceCPU: "8", corev1.ResourceMemory: "64Gi"}
	for name, q := range want {
		if v := got.Requests[name]; v.Cmp(resource.MustParse(q)) != 0 {
			t.Errorf("default request %s = %s, want %s", name, v.String(), q)
		}
	}
	if v := got.Limits[corev1.ResourceMemory]; v.Cmp(resource.MustParse("128Gi")) != 0 {
		t.Errorf("default memory limit = %s, want 128Gi", v.String())
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
			t.Errorf("container %s: requests %v, limits %v: want cpu and memory requests and a memory limit", c.Name, c.Resources.Requests, c.Resources.Limits)
		}
	}
	r := ServerDeployment(ev, &ev.Spec.Models[1], testOpts, 1).Spec.Template.Spec.Containers[0].Resources
	if v := r.Requests[corev1.ResourceCPU]; v.Cmp(resource.MustParse("1")) != 0 || r.Requests.Memory().Sign() != 0 {
		t.Errorf("spec resources not taken as they are: %v", r.Requests)
	}
}
