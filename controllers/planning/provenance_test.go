package planning

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/ledger"
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
		cm.Annotations = map[string]string{ledger.ProvenanceAnnotation: annotation}
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
		name: "vLLM server before any pod: the rendered arguments and the revision",
		eval: vllm(),
		want: &repotv1.ModelProvenance{ServerArgs: serverArgs, Revision: "abc123"},
	}, {
		name: "pods and a runner's report: images per role and container, served models, sampling, kwargs, build",
		eval: vllm(),
		w: World{
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
		}},
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
