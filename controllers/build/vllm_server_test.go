package build

import (
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
)

func TestVLLMServeCommand(t *testing.T) {
	cases := []struct {
		name string
		eval *repotv1.RepotEvaluation
		want []string
	}{{
		name: "defaults",
		eval: revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").Obj(),
		want: []string{"vllm", "serve", "Qwen/Qwen3-8B", "--host", "0.0.0.0", "--port", "8000"},
	}, {
		name: "every typed field, then args",
		eval: func() *repotv1.RepotEvaluation {
			w := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").GPUs(2).ServedModelName("qwen").
				MaxModelLen(32768).GPUMemoryUtilizationPermille(925)
			ev := w.Obj()
			ev.Spec.Models[0].VLLM.Revision = "v1"
			ev.Spec.Models[0].VLLM.Args = []string{"--enable-prefix-caching"}
			return ev
		}(),
		want: []string{"vllm", "serve", "Qwen/Qwen3-8B", "--host", "0.0.0.0", "--port", "8000", "--revision", "v1",
			"--tensor-parallel-size", "2", "--served-model-name", "qwen", "--max-model-len", "32768",
			"--gpu-memory-utilization", "0.925", "--enable-prefix-caching"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, vllmServeCommand(&tc.eval.Spec.Models[0])); diff != "" {
				t.Errorf("command (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGPUMemoryUtilizationArg(t *testing.T) {
	for in, want := range map[int32]string{900: "0.9", 925: "0.925", 1: "0.001", 50: "0.05", 1000: "1"} {
		if got := repotv1.GPUMemoryUtilizationArg(in); got != want {
			t.Errorf("%d: %q, want %q", in, got, want)
		}
	}
}

// TestVLLMPodRunsUnderGPUTelemetry checks the emissary-style wrapping: the
// init container copies the binary into the shared volume, the server runs
// vLLM as the wrapper's child, and the servedModelName reaches the
// ready-check and the runners.
func TestVLLMPodRunsUnderGPUTelemetry(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").ServedModelName("qwen").Obj()
	m := &ev.Spec.Models[0]
	pod := ServerDeployment(ev, m, testOpts, 1).Spec.Template.Spec
	if len(pod.InitContainers) != 1 || !cmp.Equal(pod.InitContainers[0].Command, []string{"cp", "/usr/local/bin/repot", "/repot-tools/repot"}) {
		t.Fatalf("init containers %+v", pod.InitContainers)
	}
	server := pod.Containers[0]
	wantCmd := []string{"/repot-tools/repot", "gpu-telemetry", "--exec", "--listen=:9400", "--",
		"vllm", "serve", "Qwen/Qwen3-8B", "--host", "0.0.0.0", "--port", "8000", "--served-model-name", "qwen"}
	if diff := cmp.Diff(wantCmd, server.Command); diff != "" || len(server.Args) != 0 {
		t.Errorf("server command (-want +got):\n%s\nargs %q", diff, server.Args)
	}
	if !slices.ContainsFunc(server.Ports, func(p corev1.ContainerPort) bool { return p.Name == "telemetry" && p.ContainerPort == 9400 }) {
		t.Errorf("no telemetry port: %+v", server.Ports)
	}
	if !slices.Contains(pod.Containers[1].Args, "qwen") {
		t.Errorf("ready-check args %q lack the served model name", pod.Containers[1].Args)
	}
	if !slices.Contains(RunArgs(ev, m), "qwen") || !slices.Contains(RunArgs(ev, m), "http://"+ServerName("ev", "m")+".ns.svc:9400/telemetry") {
		t.Errorf("runner args %q lack the served model name or the telemetry URL", RunArgs(ev, m))
	}
	sizes := map[string]string{}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
			sizes[v.Name] = v.EmptyDir.SizeLimit.String()
		}
	}
	if diff := cmp.Diff(map[string]string{"model-cache": "200Gi", "dshm": "8Gi", "repot-tools": "256Mi", "vllm-home": "8Gi", "tmp": "2Gi"}, sizes); diff != "" {
		t.Errorf("emptyDir size limits (-want +got):\n%s", diff)
	}
	if q := server.Resources.Requests[corev1.ResourceEphemeralStorage]; q.Cmp(resource.MustParse("210Gi")) != 0 {
		t.Errorf("ephemeral-storage request %s, want the 200Gi cache + 10Gi", q.String())
	}
	svc := ServerService(ev, m)
	if len(svc.Spec.Ports) != 2 || svc.Spec.Ports[1].Port != 9400 {
		t.Errorf("service ports %+v", svc.Spec.Ports)
	}
	// Headless: the name resolves to the server pod; no address is taken
	// from the cluster's Service range.
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("service clusterIP %q, want %q", svc.Spec.ClusterIP, corev1.ClusterIPNone)
	}
	// A headless Service translates no port: clients dial the pod's.
	for _, p := range svc.Spec.Ports {
		if p.TargetPort.IntVal != p.Port {
			t.Errorf("service port %s: %d targets %s; a headless Service needs them equal", p.Name, p.Port, p.TargetPort.String())
		}
	}
}

func TestVLLMPodWithPVCRequestsOnlyTheWritableLayer(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "x").ModelCachePVC("cache").Obj()
	q := resource.MustParse("64Gi")
	ev.Spec.Models[0].VLLM.ShmSizeLimit = &q
	pod := ServerDeployment(ev, &ev.Spec.Models[0], testOpts, 1).Spec.Template.Spec
	if r := pod.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage]; r.Cmp(resource.MustParse("10Gi")) != 0 {
		t.Errorf("ephemeral-storage request %s, want 10Gi with a PVC cache", r.String())
	}
	for _, v := range pod.Volumes {
		if v.Name == "dshm" && v.EmptyDir.SizeLimit.Cmp(q) != 0 {
			t.Errorf("dshm limit %s, want 64Gi", v.EmptyDir.SizeLimit)
		}
	}
}

func TestSimulatedFakeGPU(t *testing.T) {
	plain := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	fake := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).FakeGPU("h100").Obj()
	for _, tc := range []struct {
		ev   *repotv1.RepotEvaluation
		want bool
	}{{plain, false}, {fake, true}} {
		m := &tc.ev.Spec.Models[0]
		pod := ServerDeployment(tc.ev, m, testOpts, 1).Spec.Template.Spec
		got := slices.Contains(pod.Containers[0].Args, "--fake-gpu") && slices.Contains(RunArgs(tc.ev, m), "--gpu-telemetry-url") &&
			len(ServerService(tc.ev, m).Spec.Ports) == 2
		if got != tc.want {
			t.Errorf("fakeGPU %q: telemetry wired %v, want %v (server args %q)", m.Simulated.FakeGPU, got, tc.want, pod.Containers[0].Args)
		}
	}
	pod := runnerPod(fake, &fake.Spec.Models[0], testOpts)
	if !slices.Contains(pod.InitContainers[1].Args, "--readings-file=/repot/out/gpu.jsonl") {
		t.Errorf("ledger sync args %q lack the readings file", pod.InitContainers[1].Args)
	}
}

// TestServerArgsOfTheVLLMSample checks that the server arguments recorded in
// status.models[].provenance.serverArgs (ServerArgs) for the vLLM sample are
// what its server pod runs: the command after the gpu-telemetry wrapper's
// "--", and the arguments the sample's fields ask for.
func TestServerArgsOfTheVLLMSample(t *testing.T) {
	b, err := os.ReadFile("../../config/samples/vllm-h100.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var ev repotv1.RepotEvaluation
	if err := yaml.UnmarshalStrict(b, &ev); err != nil {
		t.Fatalf("vllm-h100.yaml: %v", err)
	}
	ev.Namespace = "ns"
	want := map[string][]string{
		"qwen3-30b": {"vllm", "serve", "Qwen/Qwen3-30B-A3B", "--host", "0.0.0.0", "--port", "8000",
			"--max-model-len", "32768", "--gpu-memory-utilization", "0.92"},
		"gpt-oss-20b": {"vllm", "serve", "openai/gpt-oss-20b", "--host", "0.0.0.0", "--port", "8000",
			"--served-model-name", "gpt-oss-20b"},
	}
	if len(ev.Spec.Models) != len(want) {
		t.Fatalf("the sample has %d models, the test knows %d", len(ev.Spec.Models), len(want))
	}
	for i := range ev.Spec.Models {
		m := &ev.Spec.Models[i]
		recorded := ServerArgs(m)
		if diff := cmp.Diff(want[m.Name], recorded); diff != "" {
			t.Errorf("model %s: recorded server args (-want +got):\n%s", m.Name, diff)
		}
		server := ServerDeployment(&ev, m, testOpts, 1).Spec.Template.Spec.Containers[0]
		sep := slices.Index(server.Command, "--")
		if sep < 0 {
			t.Fatalf("model %s: server command %q has no gpu-telemetry wrapper", m.Name, server.Command)
		}
		rendered := append(append([]string(nil), server.Command[sep+1:]...), server.Args...)
		if diff := cmp.Diff(rendered, recorded); diff != "" {
			t.Errorf("model %s: recorded server args differ from the pod's command (-rendered +recorded):\n%s", m.Name, diff)
		}
		if diff := cmp.Diff(recorded, DeploymentServerArgs(ServerDeployment(&ev, m, testOpts, 1))); diff != "" {
			t.Errorf("model %s: the args read back from the Deployment (-ServerArgs +DeploymentServerArgs):\n%s", m.Name, diff)
		}
	}
}

// TestServerArgsOfASimulatedServer checks that a simulated server's
// recorded arguments are its container's command and arguments.
func TestServerArgsOfASimulatedServer(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "qwen3-8b", 7).Obj()
	m := &ev.Spec.Models[0]
	server := ServerDeployment(ev, m, testOpts, 1).Spec.Template.Spec.Containers[0]
	rendered := append(append([]string(nil), server.Command...), server.Args...)
	if diff := cmp.Diff(rendered, ServerArgs(m)); diff != "" {
		t.Errorf("recorded server args (-rendered +recorded):\n%s", diff)
	}
	if ServerArgs(m)[1] != "sim-server" {
		t.Errorf("recorded server args %q do not run sim-server", ServerArgs(m))
	}
	if diff := cmp.Diff(ServerArgs(m), DeploymentServerArgs(ServerDeployment(ev, m, testOpts, 1))); diff != "" {
		t.Errorf("the args read back from the Deployment (-ServerArgs +DeploymentServerArgs):\n%s", diff)
	}
}

// TestOperatorBuildOnChildren checks that the server Deployment and the
// runner Job carry the operator's build from the options, and nothing when
// the options have none.
func TestOperatorBuildOnChildren(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "qwen3-8b", 7).Obj()
	m := &ev.Spec.Models[0]
	o := testOpts
	o.OperatorVersion, o.OperatorCommit = "v0.5.0", "c0ffee"
	for _, obj := range []metav1.Object{ServerDeployment(ev, m, o, 1), RunnerJob(ev, m, o, false)} {
		if v, c := CreatedByOperator(obj); v != "v0.5.0" || c != "c0ffee" {
			t.Errorf("%s: operator build %q %q, want v0.5.0 c0ffee", obj.GetName(), v, c)
		}
	}
	for _, obj := range []metav1.Object{ServerDeployment(ev, m, testOpts, 1), RunnerJob(ev, m, testOpts, false)} {
		if a := obj.GetAnnotations(); a[AnnotationOperatorVersion] != "" || a[AnnotationOperatorCommit] != "" {
			t.Errorf("%s: annotations %v without an operator build in the options", obj.GetName(), a)
		}
	}
}
