package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

func provPod(name, component string, created time.Time, statuses ...corev1.ContainerStatus) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(created),
			Labels: build.ChildLabels("ev", "m", component)},
		Status: corev1.PodStatus{ContainerStatuses: statuses},
	}
}

func provLedger(name, model, annotation string) corev1.ConfigMap {
	cm := corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: build.ChildLabels("ev", model, build.ComponentLedger)}}
	if annotation != "" {
		cm.Annotations = map[string]string{contract.LedgerProvenanceAnnotation: annotation}
	}
	return cm
}

func TestModelProvenance(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	vllm := func() *repotv1.RepotEvaluation {
		ev := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").Obj()
		ev.Spec.Models[0].VLLM.Revision = "abc123"
		return ev
	}
	serverArgs := []string{"vllm", "serve", "Qwen/Qwen3-8B", "--host", "0.0.0.0", "--port", "8000", "--revision", "abc123"}
	const report = `{"repot_version":"v0.3.0","repot_commit":"deadbeef","served_models":[{"id":"Qwen/Qwen3-8B","root":"Qwen/Qwen3-8B","max_model_len":40960}],` +
		`"request":{"temperature":0,"max_tokens":16384,"chat_template_kwargs":{"enable_thinking":false}},"system_prefix":"/no_think"}`
	cases := []struct {
		name string
		eval *repotv1.RepotEvaluation
		w    World
		prev *repotv1.ModelProvenance
		want *repotv1.ModelProvenance
	}{{
		name: "vLLM server not created yet: the revision only",
		eval: vllm(),
		want: &repotv1.ModelProvenance{Revision: "abc123"},
	}, {
		name: "vLLM server created: its arguments (without the telemetry wrapper) and the operator build written on it",
		eval: vllm(),
		w: World{Deployments: []appsv1.Deployment{*build.ServerDeployment(vllm(), &vllm().Spec.Models[0],
			build.Options{OperatorVersion: "v0.5.0", OperatorCommit: "c0ffee"}, 1)}},
		want: &repotv1.ModelProvenance{ServerArgs: serverArgs, Revision: "abc123", OperatorVersion: "v0.5.0", OperatorCommit: "c0ffee"},
	}, {
		name: "server created by an earlier operator: the arguments it was created with, not today's rendering; no build recorded on it",
		eval: vllm(),
		w: World{Deployments: []appsv1.Deployment{func() appsv1.Deployment {
			d := build.ServerDeployment(vllm(), &vllm().Spec.Models[0], build.Options{}, 1)
			d.Spec.Template.Spec.Containers[0].Command = []string{"/opt/repot/repot", "gpu-telemetry", "--", "vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"}
			return *d
		}()}},
		prev: &repotv1.ModelProvenance{ServerArgs: []string{"vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"}, Revision: "abc123"},
		want: &repotv1.ModelProvenance{ServerArgs: []string{"vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"}, Revision: "abc123"},
	}, {
		name: "server gone (a finished model): the arguments and operator build as recorded, whatever the builders render now",
		eval: vllm(),
		prev: &repotv1.ModelProvenance{ServerArgs: []string{"vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"}, Revision: "abc123",
			OperatorVersion: "v0.4.0", OperatorCommit: "0ld"},
		want: &repotv1.ModelProvenance{ServerArgs: []string{"vllm", "serve", "Qwen/Qwen3-8B", "--port", "8000"}, Revision: "abc123",
			OperatorVersion: "v0.4.0", OperatorCommit: "0ld"},
	}, {
		name: "pods and a runner's report: images per role and container, served models, sampling, kwargs, build",
		eval: vllm(),
		w: World{
			Deployments: []appsv1.Deployment{*build.ServerDeployment(vllm(), &vllm().Spec.Models[0], build.Options{}, 1)},
			ServerPods: []corev1.Pod{provPod("srv", build.ComponentServer, t0,
				corev1.ContainerStatus{Name: "server", Image: "vllm/vllm-openai:v0.11.0", ImageID: "docker.io/vllm/vllm-openai@sha256:aaa"},
				corev1.ContainerStatus{Name: "ready-check", Image: "repot:dev"})}, // no imageID yet: not recorded
			RunnerPods: []corev1.Pod{provPod("run-0", build.ComponentRunner, t0,
				corev1.ContainerStatus{Name: "run", Image: "repot:dev", ImageID: "repot@sha256:bbb"})},
			Ledgers: []corev1.ConfigMap{
				provLedger("ev-m-1", "m", `{"repot_version":"other"}`),
				provLedger("ev-m-0", "m", report),
				provLedger("ev-x-0", "x", `{"repot_version":"another model"}`),
			},
		},
		want: &repotv1.ModelProvenance{
			Images: []repotv1.ContainerImage{
				{Pod: "server", Container: "server", Image: "vllm/vllm-openai:v0.11.0", ImageID: "docker.io/vllm/vllm-openai@sha256:aaa"},
				{Pod: "runner", Container: "run", Image: "repot:dev", ImageID: "repot@sha256:bbb"},
			},
			ServerArgs:   serverArgs,
			Revision:     "abc123",
			ServedModels: []repotv1.ServedModel{{ID: "Qwen/Qwen3-8B", Root: "Qwen/Qwen3-8B", MaxModelLen: ptr.To[int64](40960)}},
			Sampling: []repotv1.NameValue{
				{Name: "max_tokens", Value: "16384"}, {Name: "system_prefix", Value: "/no_think"}, {Name: "temperature", Value: "0"},
			},
			ChatTemplateKwargs: []repotv1.NameValue{{Name: "enable_thinking", Value: "false"}},
			RepotVersion:       "v0.3.0",
			RepotCommit:        "deadbeef",
		},
	}, {
		name: "pods gone: the images stay; a newer pod replaces an entry; an unreadable report is skipped",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "qwen3-8b", 3).Obj(),
		w: World{
			RunnerPods: []corev1.Pod{
				provPod("run-new", build.ComponentRunner, t0.Add(time.Minute), corev1.ContainerStatus{Name: "run", ImageID: "repot@sha256:new"}),
				provPod("run-old", build.ComponentRunner, t0, corev1.ContainerStatus{Name: "run", ImageID: "repot@sha256:old"}),
			},
			Ledgers: []corev1.ConfigMap{provLedger("ev-m-0", "m", "{not json"), provLedger("ev-m-1", "m", `{"server_error":"listing the server's models: 404"}`)},
		},
		prev: &repotv1.ModelProvenance{Images: []repotv1.ContainerImage{
			{Pod: "server", Container: "server", ImageID: "repot@sha256:srv"},
			{Pod: "runner", Container: "run", ImageID: "repot@sha256:older"},
		}, ServerArgs: []string{"repot", "sim-server", "--listen=$(POD_IP):8000", "--profile", "qwen3-8b",
			"--served-model-name", "m", "--seed", "3", "--fault-permille", "0"}},
		want: &repotv1.ModelProvenance{
			Images: []repotv1.ContainerImage{
				{Pod: "server", Container: "server", ImageID: "repot@sha256:srv"},
				{Pod: "runner", Container: "run", ImageID: "repot@sha256:new"},
			},
			ServerArgs: []string{"repot", "sim-server", "--listen=$(POD_IP):8000", "--profile", "qwen3-8b",
				"--served-model-name", "m", "--seed", "3", "--fault-permille", "0"},
			ServerReportError: "listing the server's models: 404",
		},
	}, {
		name: "a shard whose server could not be asked yields to one whose report is whole",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("m", "http://example.com/v1", "gpt").Obj(),
		w: World{Ledgers: []corev1.ConfigMap{
			provLedger("ev-m-0", "m", `{"repot_version":"v1","server_error":"listing the server's models (8 attempts): connection refused"}`),
			provLedger("ev-m-1", "m", `{"repot_version":"v1","served_models":[{"id":"gpt"}]}`),
		}},
		want: &repotv1.ModelProvenance{RepotVersion: "v1", ServedModels: []repotv1.ServedModel{{ID: "gpt"}}},
	}, {
		name: "endpoint model without pods or reports: nothing to record",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("m", "http://example.com/v1", "gpt").Obj(),
		want: nil,
	}, {
		name: "endpoint model: the operator build written on its runner Job",
		eval: revtesting.MakeEvaluation("ev", "ns").Endpoint("m", "http://example.com/v1", "gpt").Obj(),
		w: World{Jobs: []batchv1.Job{{ObjectMeta: metav1.ObjectMeta{Name: build.RunnerJobName("ev", "m"),
			Annotations: map[string]string{build.AnnotationOperatorVersion: "v0.5.0"}}}}},
		prev: &repotv1.ModelProvenance{OperatorVersion: "v0.4.0"},
		want: &repotv1.ModelProvenance{OperatorVersion: "v0.5.0"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := modelProvenance(tc.eval, &tc.eval.Spec.Models[0], &tc.w, tc.prev)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("provenance (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProvenanceRecordedOnce: the server arguments and the operator build
// are recorded when the server is created, and neither an operator upgrade
// (other build options, another rendering of the server) nor the end of the
// evaluation rewrites them.
func TestProvenanceRecordedOnce(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	w := newWorld()
	w.Problems.Count = 2
	stepWith := func(o build.Options, now time.Time) Plan {
		w.Now = now
		p := PlanEvaluation(e, w, o)
		applyToWorld(e, w, p)
		return p
	}
	before, after := testOpts, testOpts
	before.OperatorVersion, before.OperatorCommit = "v0.4.0", "aaaa"
	after.OperatorVersion, after.OperatorCommit, after.Image = "v0.5.0", "bbbb", "repot-operator:next"

	stepWith(before, t0)
	d := w.deployment(build.ServerName("ev", "m"))
	if d == nil {
		t.Fatal("the first pass created no server")
	}
	created := &repotv1.ModelProvenance{ServerArgs: build.ServerArgs(&e.Spec.Models[0]), OperatorVersion: "v0.4.0", OperatorCommit: "aaaa"}
	if diff := cmp.Diff(created, e.Status.Models[0].Provenance); diff != "" {
		t.Fatalf("a new server's provenance (-want +got):\n%s", diff)
	}

	// The operator that created the server rendered it otherwise than
	// today's builders do (as an older operator would have).
	srv := &d.Spec.Template.Spec.Containers[0]
	srv.Args = []string{"sim-server", "--profile", "strong"}
	recorded := &repotv1.ModelProvenance{ServerArgs: []string{"repot", "sim-server", "--profile", "strong"}, OperatorVersion: "v0.4.0", OperatorCommit: "aaaa"}
	setServerReady(w, "ev", "m", true)
	now := t0.Add(time.Minute)
	for range 3 {
		stepWith(after, now)
	}
	if diff := cmp.Diff(recorded, e.Status.Models[0].Provenance); diff != "" {
		t.Fatalf("in flight after an upgrade (-want +got):\n%s", diff)
	}

	// Finished: every run recorded, the Job complete, the server deleted.
	w.Records = runs("m", 2, t0)
	finishJob(w, build.RunnerJobName("ev", "m"), batchv1.JobComplete, "Completed")
	for range 3 {
		now = now.Add(time.Minute)
		stepWith(after, now)
	}
	if c := findCondition(e.Status.Conditions, repotv1.ConditionComplete); c == nil || c.Status != metav1.ConditionTrue || w.deployment(build.ServerName("ev", "m")) != nil {
		t.Fatalf("want the evaluation complete and its server gone: %+v", e.Status.Conditions)
	}
	if diff := cmp.Diff(recorded, e.Status.Models[0].Provenance); diff != "" {
		t.Errorf("finished (-want +got):\n%s", diff)
	}
}
