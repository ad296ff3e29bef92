package v1alpha1_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	v1alpha1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// These tests run the CRD's OpenAPI and CEL validation in a real
// kube-apiserver (bin/kube-apiserver and bin/etcd, built by
// hack/build-cluster-bins.sh envtest).

var k8sClient client.Client

// apiServerMissing says why the API-server tests cannot run; the package's
// unit tests still do.
var apiServerMissing string

// requireAPIServer skips a test that needs the real API server when bin/
// lacks it.
func requireAPIServer(t *testing.T) {
	t.Helper()
	if apiServerMissing != "" {
		t.Skip(apiServerMissing)
	}
}

func TestMain(m *testing.M) {
	os.Exit(runWithAPIServer(m))
}

func runWithAPIServer(m *testing.M) int {
	env := &framework.Framework{}
	cfg, err := env.Init()
	if errors.Is(err, framework.ErrBinariesMissing) {
		apiServerMissing = "skipping: " + err.Error()
		return m.Run()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "envtest:", err)
		return 1
	}
	defer func() { _ = env.Teardown() }()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = v1alpha1.AddToScheme(scheme)
	k8sClient, err = client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "client:", err)
		return 1
	}
	return m.Run()
}

// newNamespace creates a namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "cel-"}}
	if err := k8sClient.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// manifest is one test YAML file; bad ones start with "# want: <message>".
type manifest struct {
	path string
	want string
	obj  *unstructured.Unstructured
}

// readManifests reads the RepotEvaluation of each file pattern matches.
func readManifests(t *testing.T, pattern string) []manifest {
	t.Helper()
	return readKind(t, pattern, "RepotEvaluation")
}

// readKind reads the object of the kind from each file pattern matches (a
// file may hold several YAML documents).
func readKind(t *testing.T, pattern, kind string) []manifest {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests match %s (%v)", pattern, err)
	}
	var out []manifest
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mf := manifest{path: p}
		if first, _, ok := strings.Cut(string(data), "\n"); ok && strings.HasPrefix(first, "# want: ") {
			mf.want = strings.TrimPrefix(first, "# want: ")
		}
		for _, doc := range strings.Split(string(data), "\n---\n") {
			u := &unstructured.Unstructured{}
			if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			if u.GetKind() == kind {
				mf.obj = u
			}
		}
		if mf.obj == nil {
			t.Fatalf("%s: no %s in the file", p, kind)
		}
		out = append(out, mf)
	}
	return out
}

// expectRejected creates each manifest and wants the API server to refuse
// it with its "# want:" message; at least min of them.
func expectRejected(t *testing.T, mfs []manifest, min int) {
	t.Helper()
	if len(mfs) < min {
		t.Fatalf("only %d invalid manifests; want at least %d", len(mfs), min)
	}
	ns := newNamespace(t)
	for _, mf := range mfs {
		t.Run(filepath.Base(mf.path), func(t *testing.T) {
			if mf.want == "" {
				t.Fatalf("%s: first line must be `# want: <part of the API server's message>`", mf.path)
			}
			mf.obj.SetNamespace(ns)
			err := k8sClient.Create(context.Background(), mf.obj)
			if err == nil {
				t.Fatalf("the API server accepted %s; want an error containing %q", mf.path, mf.want)
			}
			if !strings.Contains(err.Error(), mf.want) {
				t.Errorf("error for %s:\n  %v\nwant it to contain %q", mf.path, err, mf.want)
			}
		})
	}
}

// expectAccepted creates each manifest and wants the API server to take it.
func expectAccepted(t *testing.T, mfs []manifest) {
	t.Helper()
	ns := newNamespace(t)
	for _, mf := range mfs {
		t.Run(filepath.Base(mf.path), func(t *testing.T) {
			mf.obj.SetNamespace(ns)
			if err := k8sClient.Create(context.Background(), mf.obj); err != nil {
				t.Fatalf("the API server rejected %s: %v", mf.path, err)
			}
		})
	}
}

func TestInvalidManifestsAreRejected(t *testing.T) {
	requireAPIServer(t)
	expectRejected(t, readManifests(t, "testdata/invalid/*.yaml"), 10)
}

func TestValidManifestsAreAccepted(t *testing.T) {
	requireAPIServer(t)
	expectAccepted(t, append(readManifests(t, "testdata/valid/*.yaml"), readManifests(t, "../../config/samples/*.yaml")...))
}

func TestDefaultsAreApplied(t *testing.T) {
	requireAPIServer(t)
	ns := newNamespace(t)
	ctx := context.Background()
	ev := revtesting.MakeEvaluation("defaults", ns).
		Simulated("sim", "strong", 3).
		VLLM("qwen", "Qwen/Qwen3-30B-A3B").
		ProblemsConfigMap("problems", "").
		Obj()
	if err := k8sClient.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	got := &v1alpha1.RepotEvaluation{}
	if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ev), got); err != nil {
		t.Fatal(err)
	}
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	yes := true
	want := v1alpha1.RepotEvaluationSpec{
		Suite:        v1alpha1.SuiteOpenSource120,
		Problems:     &v1alpha1.ProblemSource{ConfigMap: &v1alpha1.ConfigMapKey{Name: "problems", Key: "problems.jsonl"}},
		Methods:      v1alpha1.DefaultMethods(),
		RepairBudget: i32(1),
		Adaptive:     &v1alpha1.AdaptiveSpec{ShortPrefixPermille: i32(150)},
		Sampling:     &v1alpha1.SamplingSpec{Temperature: "0", MaxTokens: i32(16384), DisableThinking: &yes},
		Models: []v1alpha1.ModelSpec{
			{Name: "sim", Simulated: &v1alpha1.SimulatedModel{Profile: "strong", Seed: i64(3), FaultPermille: i32(0)}},
			{Name: "qwen", VLLM: &v1alpha1.VLLMModel{
				Image: v1alpha1.DefaultVLLMImage, Model: "Qwen/Qwen3-30B-A3B",
				GPUs: i32(1), GPUProduct: "NVIDIA-H100-80GB-HBM3",
			}},
		},
		Runner:              &v1alpha1.RunnerSpec{ShardsPerModel: i32(4), InFlightPerShard: i32(64)},
		StalledAfterSeconds: i32(v1alpha1.DefaultStalledAfterSeconds),
	}
	if diff := cmp.Diff(want, got.Spec); diff != "" {
		t.Errorf("defaulted spec (-want +got):\n%s", diff)
	}
	// The getters agree with the API server's defaults on an undefaulted spec.
	raw := revtesting.MakeEvaluation("x", ns).Simulated("sim", "strong", 3).VLLM("qwen", "Qwen/Qwen3-30B-A3B").Obj().Spec
	gotGetters := []any{raw.SuiteOrDefault(), raw.MethodsOrDefault(), raw.RepairBudgetOrDefault(),
		raw.ShortPrefixPermilleOrDefault(), raw.TemperatureOrDefault(), raw.MaxTokensOrDefault(),
		raw.DisableThinkingFor(&raw.Models[0]), raw.ShardsPerModelOrDefault(), raw.InFlightPerShardOrDefault(),
		raw.Models[1].VLLM.GPUsOrDefault(), raw.Models[1].VLLM.GPUProductOrDefault(), raw.Models[1].VLLM.ImageOrDefault(),
		raw.StalledAfterSecondsOrDefault()}
	s := got.Spec
	wantGetters := []any{s.Suite, s.Methods, *s.RepairBudget, *s.Adaptive.ShortPrefixPermille,
		s.Sampling.Temperature, *s.Sampling.MaxTokens, *s.Sampling.DisableThinking,
		*s.Runner.ShardsPerModel, *s.Runner.InFlightPerShard,
		*s.Models[1].VLLM.GPUs, s.Models[1].VLLM.GPUProduct, s.Models[1].VLLM.Image,
		*s.StalledAfterSeconds}
	if diff := cmp.Diff(wantGetters, gotGetters); diff != "" {
		t.Errorf("...OrDefault getters disagree with the CRD defaults (-crd +getters):\n%s", diff)
	}
}

func TestSpecImmutableOnceStarted(t *testing.T) {
	requireAPIServer(t)
	ns := newNamespace(t)
	ctx := context.Background()
	ev := revtesting.MakeEvaluation("immutable", ns).Simulated("sim", "strong", 1).
		ArtifactsS3(v1alpha1.S3Store{Endpoint: "s3.example.com", Bucket: "traces"}).Obj()
	if err := k8sClient.Create(ctx, ev); err != nil {
		t.Fatal(err)
	}
	// Before it starts, the spec may change.
	ev.Spec.Methods = []v1alpha1.Method{v1alpha1.MethodPoT, v1alpha1.MethodVRR, v1alpha1.MethodSelfConsistency, v1alpha1.MethodVEX}
	tau, k, calls := int32(50), int32(4), int32(6)
	ev.Spec.VRR = &v1alpha1.VRRSpec{Tau: &tau}
	ev.Spec.SelfConsistency = &v1alpha1.SelfConsistencySpec{Samples: &k}
	ev.Spec.VEX = &v1alpha1.VEXSpec{MaxLLMCalls: &calls}
	if err := k8sClient.Update(ctx, ev); err != nil {
		t.Fatalf("changing the spec before the start was rejected: %v", err)
	}
	now := metav1.Now()
	ev.Status.StartTime = &now
	if err := k8sClient.Status().Update(ctx, ev); err != nil {
		t.Fatalf("setting status.startTime: %v", err)
	}

	cases := []struct {
		name   string
		mutate func(*v1alpha1.RepotEvaluation)
		want   string // "" means accepted
	}{
		{"suspend", func(e *v1alpha1.RepotEvaluation) { b := true; e.Spec.Suspend = &b }, ""},
		{"resume", func(e *v1alpha1.RepotEvaluation) { b := false; e.Spec.Suspend = &b }, ""},
		{"labels", func(e *v1alpha1.RepotEvaluation) { e.Labels = map[string]string{"team": "a"} }, ""},
		{"methods", func(e *v1alpha1.RepotEvaluation) { e.Spec.Methods = append(e.Spec.Methods, v1alpha1.MethodRePoT) },
			"spec.suite, spec.problems and spec.methods cannot change once the evaluation has started"},
		{"suite", func(e *v1alpha1.RepotEvaluation) { e.Spec.Suite = v1alpha1.SuitePuzzleZoo775 },
			"spec.suite, spec.problems and spec.methods cannot change once the evaluation has started"},
		{"add problems", func(e *v1alpha1.RepotEvaluation) {
			e.Spec.Problems = &v1alpha1.ProblemSource{URL: "https://example.com/p.jsonl"}
		}, "spec.suite, spec.problems and spec.methods cannot change"},
		{"model profile", func(e *v1alpha1.RepotEvaluation) { e.Spec.Models[0].Simulated.Profile = "weak" },
			"spec.models cannot change once the evaluation has started"},
		{"add model", func(e *v1alpha1.RepotEvaluation) {
			e.Spec.Models = append(e.Spec.Models, v1alpha1.ModelSpec{Name: "b", Simulated: &v1alpha1.SimulatedModel{Profile: "weak"}})
		}, "spec.models cannot change once the evaluation has started"},
		{"sampling", func(e *v1alpha1.RepotEvaluation) { e.Spec.Sampling.Temperature = "1" },
			"spec.repairBudget, spec.adaptive, spec.sampling and spec.vrr cannot change"},
		{"vrr tau", func(e *v1alpha1.RepotEvaluation) { n := int32(200); e.Spec.VRR.Tau = &n },
			"spec.repairBudget, spec.adaptive, spec.sampling and spec.vrr cannot change"},
		{"add verifier noise", func(e *v1alpha1.RepotEvaluation) {
			n := int32(100)
			e.Spec.VRR.VerifierNoise = &v1alpha1.VerifierNoiseSpec{FalseAcceptPermille: &n}
		}, "spec.repairBudget, spec.adaptive, spec.sampling and spec.vrr cannot change"},
		{"remove vrr", func(e *v1alpha1.RepotEvaluation) { e.Spec.VRR = nil },
			"spec.repairBudget, spec.adaptive, spec.sampling and spec.vrr cannot change"},
		{"self-consistency samples", func(e *v1alpha1.RepotEvaluation) { n := int32(8); e.Spec.SelfConsistency.Samples = &n },
			"spec.selfConsistency and spec.vex cannot change once the evaluation has started"},
		{"vex environments", func(e *v1alpha1.RepotEvaluation) {
			e.Spec.VEX.Environments = []v1alpha1.VEXEnvironmentSpec{{Environment: "blocksworld", Proposer: v1alpha1.VEXProposerCode}}
		}, "spec.selfConsistency and spec.vex cannot change once the evaluation has started"},
		{"shards", func(e *v1alpha1.RepotEvaluation) { n := int32(8); e.Spec.Runner.ShardsPerModel = &n },
			"spec.runner, spec.artifacts, spec.activeDeadlineSeconds and spec.ttlSecondsAfterFinished cannot change"},
		{"add deadline", func(e *v1alpha1.RepotEvaluation) { n := int64(3600); e.Spec.ActiveDeadlineSeconds = &n },
			"spec.runner, spec.artifacts, spec.activeDeadlineSeconds and spec.ttlSecondsAfterFinished cannot change"},
		{"store bucket", func(e *v1alpha1.RepotEvaluation) { e.Spec.Artifacts.S3.Bucket = "other" },
			"spec.runner, spec.artifacts, spec.activeDeadlineSeconds and spec.ttlSecondsAfterFinished cannot change"},
		{"store to a PVC", func(e *v1alpha1.RepotEvaluation) { e.Spec.Artifacts = &v1alpha1.ArtifactsSpec{PVCName: "traces"} },
			"spec.runner, spec.artifacts, spec.activeDeadlineSeconds and spec.ttlSecondsAfterFinished cannot change"},
		{"do not retain the traces", func(e *v1alpha1.RepotEvaluation) { b := false; e.Spec.Artifacts.RetainAfterDeletion = &b }, ""},
		{"retain them again", func(e *v1alpha1.RepotEvaluation) { e.Spec.Artifacts.RetainAfterDeletion = nil }, ""},
		{"maxParallelModels", func(e *v1alpha1.RepotEvaluation) { n := int32(1); e.Spec.MaxParallelModels = &n }, ""},
		{"stalledAfterSeconds", func(e *v1alpha1.RepotEvaluation) { n := int32(60); e.Spec.StalledAfterSeconds = &n }, ""},
		{"add budget", func(e *v1alpha1.RepotEvaluation) {
			n := int64(1000)
			e.Spec.Budget = &v1alpha1.BudgetSpec{BudgetLimits: v1alpha1.BudgetLimits{MaxCompletionTokens: &n, MaxGPUHours: "0.5"}}
		}, ""},
		{"raise budget", func(e *v1alpha1.RepotEvaluation) {
			n := int64(5000)
			e.Spec.Budget.MaxCompletionTokens = &n
			e.Spec.Budget.PerModel = []v1alpha1.ModelBudget{{Model: "sim", BudgetLimits: v1alpha1.BudgetLimits{MaxModelCalls: &n}}}
		}, ""},
		{"remove budget", func(e *v1alpha1.RepotEvaluation) { e.Spec.Budget = nil }, ""},
		{"add placement", func(e *v1alpha1.RepotEvaluation) {
			e.Spec.Placement = &v1alpha1.PlacementSpec{PriorityClassName: "batch-low"}
		}, "spec.placement cannot change once the evaluation has started"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := &v1alpha1.RepotEvaluation{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(ev), cur); err != nil {
				t.Fatal(err)
			}
			tc.mutate(cur)
			err := k8sClient.Update(ctx, cur)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("accepted; want an error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("error %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}
