package build

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
)

// TestServerPodsPassRestrictedPodSecurity renders every kind of server
// Deployment and checks its pod template with the Pod Security admission
// library at `restricted`, latest version: what a namespace labelled
// pod-security.kubernetes.io/enforce=restricted admits.
func TestServerPodsPassRestrictedPodSecurity(t *testing.T) {
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	restricted := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
	cases := []struct {
		name string
		eval *repotv1.RepotEvaluation
	}{
		{"vllm", revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").Obj()},
		{"vllm with a token, a PVC cache and 4 GPUs", revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").
			HFTokenSecret("hf", "").ModelCachePVC("cache").GPUs(4).Obj()},
		{"simulated", revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()},
		{"simulated with a fake GPU", revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).FakeGPU("h100").Obj()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := ServerDeployment(tc.eval, &tc.eval.Spec.Models[0], testOpts, 1).Spec.Template
			agg := policy.AggregateCheckResults(evaluator.EvaluatePod(restricted, &tmpl.ObjectMeta, &tmpl.Spec))
			if !agg.Allowed {
				t.Errorf("forbidden at restricted: %s: %s", agg.ForbiddenReason(), agg.ForbiddenDetail())
			}
		})
	}
}

// TestVLLMPodWritablePaths checks that the vLLM container, whose root is
// read-only, has every directory vLLM and its libraries write to (HOME, the
// caches, the Hugging Face home, /tmp, /dev/shm) on a writable volume, and
// that it runs as the non-root user with every capability dropped.
func TestVLLMPodWritablePaths(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").Obj()
	pod := ServerDeployment(ev, &ev.Spec.Models[0], testOpts, 1).Spec.Template.Spec
	server := pod.Containers[0]
	sc := server.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Fatalf("the vLLM container's root is writable: %+v", sc)
	}
	if ps := pod.SecurityContext; ps == nil || ps.RunAsUser == nil || *ps.RunAsUser == 0 || ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot {
		t.Errorf("the vLLM pod may run as root: %+v", ps)
	}
	if !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) != 0 {
		t.Errorf("capabilities %+v, want all dropped", sc.Capabilities)
	}
	writable := map[string]bool{} // mount path -> on a writable volume
	for _, m := range server.VolumeMounts {
		writable[m.MountPath] = !m.ReadOnly
	}
	beneathWritable := func(p string) bool {
		for dir := path.Clean(p); ; dir = path.Dir(dir) {
			if writable[dir] {
				return true
			}
			if dir == "/" {
				return false
			}
		}
	}
	env := map[string]string{}
	for _, e := range server.Env {
		env[e.Name] = e.Value
	}
	for _, name := range []string{"HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "HF_HOME", "VLLM_CACHE_ROOT", "VLLM_CONFIG_ROOT",
		"TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "NUMBA_CACHE_DIR", "TMPDIR"} {
		if env[name] == "" || !beneathWritable(env[name]) {
			t.Errorf("%s=%q is not beneath a writable mount (%v)", name, env[name], writable)
		}
	}
	for _, dir := range []string{"/tmp", "/dev/shm"} {
		if !beneathWritable(dir) {
			t.Errorf("%s is not writable (%v)", dir, writable)
		}
	}
	// getpass.getuser(), which torch calls, fails for a uid without a
	// passwd entry unless USER is set.
	if env["USER"] == "" {
		t.Errorf("USER is unset")
	}
	sizes := map[string]string{}
	for _, v := range pod.Volumes {
		if v.EmptyDir != nil {
			if v.EmptyDir.SizeLimit == nil {
				t.Errorf("emptyDir %s has no size limit", v.Name)
				continue
			}
			sizes[v.Name] = v.EmptyDir.SizeLimit.String()
		}
	}
	want := map[string]string{"model-cache": "200Gi", "dshm": "8Gi", "repot-tools": "256Mi", "vllm-home": "8Gi", "tmp": "2Gi"}
	if diff := cmp.Diff(want, sizes); diff != "" {
		t.Errorf("emptyDir size limits (-want +got):\n%s", diff)
	}
	// The writable layer request still covers what used to be written to
	// the container's layer, now on vllm-home and tmp.
	home, tmp := resource.MustParse(sizes["vllm-home"]), resource.MustParse(sizes["tmp"])
	home.Add(tmp)
	if home.Cmp(writableLayerRequest) > 0 {
		t.Errorf("vllm-home and tmp hold up to %s, more than the %s requested for them", home.String(), writableLayerRequest.String())
	}
}

// TestHFTokenOnlyInTheVLLMContainer: the Hugging Face token reaches the vLLM
// container and no other container of the pod.
func TestHFTokenOnlyInTheVLLMContainer(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").HFTokenSecret("hf", "token").Obj()
	pod := ServerDeployment(ev, &ev.Spec.Models[0], testOpts, 1).Spec.Template.Spec
	var with []string
	for _, c := range slices.Concat(pod.InitContainers, pod.Containers) {
		for _, e := range c.Env {
			if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
				with = append(with, c.Name+":"+e.Name+"="+e.ValueFrom.SecretKeyRef.Name+"/"+e.ValueFrom.SecretKeyRef.Key)
			}
		}
		if len(c.EnvFrom) != 0 {
			t.Errorf("container %s has envFrom %+v", c.Name, c.EnvFrom)
		}
	}
	if diff := cmp.Diff([]string{"server:HF_TOKEN=hf/token"}, with); diff != "" {
		t.Errorf("secret references (-want +got):\n%s", diff)
	}
}

// TestDefaultVLLMImagePinnedByDigest: the default vLLM image names its
// release tag and a sha256 digest, so that every server of the default
// image runs the same bytes.
func TestDefaultVLLMImagePinnedByDigest(t *testing.T) {
	ev := revtesting.MakeEvaluation("ev", "ns").VLLM("m", "Qwen/Qwen3-8B").Obj()
	ev.Spec.Models[0].VLLM.Image = "" // what the CRD's default fills in
	got := ServerDeployment(ev, &ev.Spec.Models[0], testOpts, 1).Spec.Template.Spec.Containers[0].Image
	if !regexp.MustCompile(`^vllm/vllm-openai:v[0-9]+\.[0-9]+\.[0-9]+@sha256:[0-9a-f]{64}$`).MatchString(got) {
		t.Errorf("default vLLM image %q is not pinned as vllm/vllm-openai:vX.Y.Z@sha256:<digest>", got)
	}
	if !strings.Contains(got, repotv1.DefaultVLLMImage) {
		t.Errorf("default vLLM image %q is not repotv1.DefaultVLLMImage %q", got, repotv1.DefaultVLLMImage)
	}
}
