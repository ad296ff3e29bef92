//go:build e2e

package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"repot.dev/repot-operator/analysis/summary"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

const ns = "default"

// faultsYAML runs the sample's strong model again with 10% of requests
// failing at the server.
const faultsYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: faults
spec:
  suite: open-source-120
  methods: [pot, pot-retry, repot, repot-adaptive]
  models:
  - name: sim-strong
    simulated: {profile: strong, seed: 1, faultPermille: 100}
  runner:
    shardsPerModel: 2
    inFlightPerShard: 16
` + smallRunnerYAML

// againYAML is a small evaluation that is deleted and applied again under
// the same name.
const againYAML = `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: again
spec:
  suite: open-source-120
  methods: [pot]
  models:
  - name: sim-strong
    simulated: {profile: strong, seed: 1}
  runner: {shardsPerModel: 1}
`

func mainSpecs(cluster func() *testCluster) {
	Describe("the operator on the local cluster", func() {
		var (
			tc   *testCluster
			refs = map[string]*reference{}
		)

		// get reads an evaluation; inside Eventually pass its Gomega so that a
		// slow API server (two busy cores) means "try again", not a failure.
		get := func(g Gomega, name string) *repotv1.RepotEvaluation {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			e := &repotv1.RepotEvaluation{}
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, e)).To(Succeed())
			return e
		}
		progress := func(g Gomega, name string) (int32, int32) {
			e := get(g, name)
			if e.Status.Progress == nil {
				return 0, 0
			}
			return e.Status.Progress.RunsDone, e.Status.Progress.RunsTotal
		}

		BeforeAll(func() {
			// Three SIMULATED GPUs: one for each of the demo's two models and
			// one for faults'.
			tc = cluster()
			tc.kubectl("apply", "-n", ns, "-f", filepath.Join(rootDir, "config/samples/demo.yaml"))
			u := &repotv1.RepotEvaluation{}
			Expect(yaml.Unmarshal([]byte(faultsYAML), u)).To(Succeed())
			u.Namespace = ns
			ctx, cancel := ctxTimeout(30 * time.Second)
			Expect(tc.c.Create(ctx, u)).To(Succeed())
			cancel()
		})

		It("starts a server and an Indexed runner Job per simulated model", func() {
			demo := get(Default, "demo")
			for _, m := range demo.Spec.Models {
				var job batchv1.Job
				Eventually(func() error {
					tc.operatorAlive()
					ctx, cancel := ctxTimeout(30 * time.Second)
					defer cancel()
					return tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: build.RunnerJobName("demo", m.Name)}, &job)
				}).WithTimeout(3 * time.Minute).WithPolling(time.Second).Should(Succeed())
				Expect(*job.Spec.CompletionMode).To(Equal(batchv1.IndexedCompletion))
				var args []string
				for _, c := range job.Spec.Template.Spec.Containers {
					if c.Name == "run" {
						args = c.Args
					}
				}
				Expect(args).NotTo(BeEmpty(), "runner container of job %s", job.Name)
				ip := fmt.Sprintf("127.250.0.%d", len(refs)+1) // outside the pod IP blocks of local clusters
				refs[m.Name] = startReference(m.Name, args, m.Simulated.Profile, ptr.Deref(m.Simulated.Seed, 0), m.Name, ip)
			}
		})

		It("resumes a shard from its ledger when its runner pod is deleted mid-shard", func() {
			// Wait for a shard that has written records and still runs.
			var victim corev1.Pod
			var recorded int
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				var pods corev1.PodList
				g.Expect(tc.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{
					build.LabelEvaluation: "demo", build.LabelComponent: build.ComponentRunner})).To(Succeed())
				best := -1
				for _, p := range pods.Items {
					if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
						continue
					}
					idx := p.Annotations[batchv1.JobCompletionIndexAnnotation]
					var cm corev1.ConfigMap
					if err := tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: build.LedgerPrefix("demo", p.Labels[build.LabelModel]) + idx}, &cm); err != nil {
						continue
					}
					if n := strings.Count(cm.Data["records.jsonl"], "\n"); n >= 10 && n > best {
						best, victim = n, p
					}
				}
				g.Expect(best).To(BeNumerically(">=", 10), "no running shard with 10 records in its ledger yet")
				recorded = best
			}).WithTimeout(10 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			idx := victim.Annotations[batchv1.JobCompletionIndexAnnotation]
			model := victim.Labels[build.LabelModel]
			By(fmt.Sprintf("deleting pod %s (model %s, shard %s, %d records in its ledger)", victim.Name, model, idx, recorded))
			ctx, cancel := ctxTimeout(30 * time.Second)
			Expect(tc.c.Delete(ctx, &victim)).To(Succeed())
			cancel()
			var restored string
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				var pods corev1.PodList
				g.Expect(tc.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{
					build.LabelEvaluation: "demo", build.LabelModel: model, build.LabelComponent: build.ComponentRunner})).To(Succeed())
				found := false
				for _, p := range pods.Items {
					if p.UID == victim.UID || p.Annotations[batchv1.JobCompletionIndexAnnotation] != idx {
						continue
					}
					restored = tc.podLog(ns, p.Name, "ledger-restore")
					found = restored != ""
				}
				g.Expect(found).To(BeTrue(), "no replacement pod of shard %s has run ledger-restore yet", idx)
			}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			var n int
			_, err := fmt.Sscanf(restored[strings.Index(restored, "restored "):], "restored %d records", &n)
			Expect(err).NotTo(HaveOccurred(), "ledger-restore log: %q", restored)
			Expect(n).To(BeNumerically(">=", recorded), "the replacement pod restored fewer records than the ledger held before the deletion")
		})

		It("loses and double-counts nothing when the operator is killed mid-run", func() {
			var before int32
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				done, total := progress(g, "demo")
				g.Expect(total).To(BeNumerically(">", 0))
				g.Expect(done).To(BeNumerically("<", total), "the evaluation finished before the operator could be killed")
				before = done
			}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
			// SIGKILL through containerd: no graceful shutdown and no released
			// leader lease; the kubelet restarts the container after its
			// back-off while the runners keep writing their ledgers.
			By(fmt.Sprintf("killing the operator's container at %d runs done", before))
			tc.killOperator()
			Eventually(func(g Gomega) int32 {
				tc.operatorAlive()
				done, _ := progress(g, "demo")
				return done
			}).WithTimeout(5 * time.Minute).WithPolling(2 * time.Second).Should(BeNumerically(">", before))
		})

		It("reports the same numbers as `repot run` on the same suite, profile and seed", func() {
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				e := get(g, "demo")
				g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "progress %v", e.Status.Progress)
			}).WithTimeout(30 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
			e := get(Default, "demo")
			Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal))
			Expect(e.Status.Models).To(HaveLen(len(e.Spec.Models)))
			for _, ms := range e.Status.Models {
				ref, ok := refs[ms.Name]
				Expect(ok).To(BeTrue(), "no reference run for model %s", ms.Name)
				sum, err := ref.wait(20 * time.Minute)
				Expect(err).NotTo(HaveOccurred())
				expectSameNumbers(ms, sum, true)
			}
		})

		It("reports the SIMULATED GPU cost per model and method; the stronger model spends fewer joules per solved problem", func() {
			e := get(Default, "demo")
			perSolved := map[string]int64{}
			for _, ms := range e.Status.Models {
				g := ms.GPU
				Expect(g).NotTo(BeNil(), "model %s has no GPU status", ms.Name)
				Expect(g.Simulated).To(BeTrue())
				Expect(ms.GPUSecondsHeld).To(BeNumerically(">", 0))
				Expect(g.EnergyJoules).To(BeNumerically(">", 0))
				Expect(g.JoulesPerSolvedProblem).NotTo(BeNil())
				Expect(meta.IsStatusConditionTrue(g.Conditions, repotv1.ConditionGPUHealthy)).To(BeTrue(), "conditions %v", g.Conditions)
				var sum int64
				for _, r := range ms.Methods {
					Expect(r.EstimatedEnergyJoules).NotTo(BeNil(), "method %s", r.Method)
					sum += *r.EstimatedEnergyJoules
				}
				Expect(sum).To(Equal(g.EnergyJoules), "the methods' estimates add up to the model's energy")
				perSolved[ms.Name] = *g.JoulesPerSolvedProblem
			}
			Expect(perSolved["sim-strong"]).To(BeNumerically("<", perSolved["sim-weak"]))
		})

		It("runs the whole evaluation in restricted runner pods with the seccomp filter in force, and says so in status", func() {
			// The runner pods run as 65532 with containerd's RuntimeDefault
			// seccomp profile, no capabilities and a read-only root: no user
			// namespaces, the weakest setting a real runner pod gives. The
			// runners must still have installed their own filter, and report it.
			e := get(Default, "demo")
			Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue())
			Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal))
			Eventually(func(g Gomega) {
				g.Expect(get(g, "demo").Status.SandboxMode).To(HavePrefix("none, seccomp"))
			}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		})

		It("records per model the image digests of the pods that ran, the server's arguments and self-report, the sampling and the runner's build", func() {
			// containerd reports each container's image by digest; the status
			// keeps it after the pods are gone.
			digest := MatchRegexp(`^(.+@)?sha256:[0-9a-f]{64}$`)
			Eventually(func(g Gomega) {
				e := get(g, "demo")
				g.Expect(e.Status.Models).To(HaveLen(len(e.Spec.Models)))
				for _, m := range e.Status.Models {
					p := m.Provenance
					g.Expect(p).NotTo(BeNil(), "model %s has no provenance", m.Name)
					images := map[string]string{}
					for _, c := range p.Images {
						images[c.Pod+"/"+c.Container] = c.ImageID
					}
					g.Expect(images).To(HaveKeyWithValue("server/server", digest), "model %s", m.Name)
					g.Expect(images).To(HaveKeyWithValue("runner/run", digest), "model %s", m.Name)
					g.Expect(len(p.ServerArgs)).To(BeNumerically(">", 2), "model %s", m.Name)
					g.Expect(p.ServerArgs[:2]).To(Equal([]string{"repot", "sim-server"}), "model %s", m.Name)
					g.Expect(p.ServedModels).NotTo(BeEmpty(), "model %s: what the server said on /v1/models", m.Name)
					g.Expect(p.ServedModels[0].Root).To(HavePrefix("repot-simulation/"))
					g.Expect(p.ServedModels[0].MaxModelLen).NotTo(BeNil())
					g.Expect(p.Sampling).To(ContainElement(repotv1.NameValue{Name: "temperature", Value: "0"}), "model %s", m.Name)
					g.Expect(p.RepotVersion).NotTo(BeEmpty(), "model %s: the runner's build", m.Name)
					GinkgoWriter.Printf("%s: server %s, runner %s, served %s\n", m.Name, images["server/server"], images["runner/run"], p.ServedModels[0].ID)
				}
			}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		})

		It("exports the demo's records with the status's numbers, and reports it in a page chromium renders", func() {
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				e := get(g, "demo")
				g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "progress %v", e.Status.Progress)
			}).WithTimeout(30 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
			expectExportMatchesStatus(tc, "demo")
		})

		It("solves the same problems when the server fails 10% of requests, and reports the infra errors", func() {
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				e := get(g, "faults")
				g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "progress %v", e.Status.Progress)
			}).WithTimeout(30 * time.Minute).WithPolling(5 * time.Second).Should(Succeed())
			e := get(Default, "faults")
			Expect(e.Status.Models).To(HaveLen(1))
			sum, err := refs["sim-strong"].wait(20 * time.Minute)
			Expect(err).NotTo(HaveOccurred())
			expectSameNumbers(e.Status.Models[0], sum, false)
			var infra int64
			for _, r := range e.Status.Models[0].Methods {
				infra += int64(r.InfraErrors) + r.InfraRetries
			}
			Expect(infra).To(BeNumerically(">", 0), "10%% of requests failed but the status reports no infra errors or retries")
		})

		It("removes every child when an evaluation is deleted", func() {
			for _, name := range []string{"demo", "faults"} {
				e := get(Default, name)
				ctx, cancel := ctxTimeout(30 * time.Second)
				Expect(tc.c.Delete(ctx, e)).To(Succeed())
				cancel()
				Eventually(func(g Gomega) {
					ctx, cancel := ctxTimeout(30 * time.Second)
					defer cancel()
					err := tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &repotv1.RepotEvaluation{})
					g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "evaluation %s still exists (%v)", name, err)
					g.Expect(children(ctx, tc.c, name, e.UID)).To(BeEmpty())
				}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			}
		})
	})
}

// e2eHold is the finalizer the re-creation spec puts on an old child so
// that the garbage collector cannot remove it yet.
const e2eHold = "e2e.repot.dev/hold"

func recreateSpecs(cluster func() *testCluster) {
	Describe("an evaluation deleted and applied again under the same name", Label("recreate"), func() {
		var tc *testCluster
		BeforeAll(func() {
			tc = cluster()
		})
		get := func(g Gomega) *repotv1.RepotEvaluation { return tc.evaluation(g, "again") }
		apply := func() {
			u := &repotv1.RepotEvaluation{}
			Expect(yaml.Unmarshal([]byte(againYAML), u)).To(Succeed())
			u.Namespace = ns
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			Expect(tc.c.Create(ctx, u)).To(Succeed())
		}
		complete := func() *repotv1.RepotEvaluation {
			var e *repotv1.RepotEvaluation
			Eventually(func(g Gomega) {
				tc.operatorAlive()
				e = get(g)
				g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "progress %v", e.Status.Progress)
			}).WithTimeout(20 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
			return e
		}
		ledger := build.LedgerName("again", "sim-strong", 0)

		It("starts from zero runs while an old ledger is held by a finalizer, and ends with exactly its own results", func() {
			apply()
			old := complete()
			Expect(old.Status.Progress.RunsDone).To(BeEquivalentTo(120))

			// Hold the old ledger, delete the evaluation and apply it again at
			// once, as Argo CD's self-heal or kubectl replace --force do.
			ctx, cancel := ctxTimeout(30 * time.Second)
			var cm corev1.ConfigMap
			Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ledger}, &cm)).To(Succeed())
			patch := client.MergeFrom(cm.DeepCopy())
			cm.Finalizers = append(cm.Finalizers, e2eHold)
			Expect(tc.c.Patch(ctx, &cm, patch)).To(Succeed())
			Expect(tc.c.Delete(ctx, old)).To(Succeed())
			cancel()
			Eventually(func(g Gomega) {
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				err := tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "again"}, &repotv1.RepotEvaluation{})
				g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "the old evaluation is still there (%v)", err)
			}).WithTimeout(time.Minute).WithPolling(200 * time.Millisecond).Should(Succeed())
			apply()

			// While the old ledger is held, the new evaluation reads none of
			// it and says why its ledger cannot be made.
			Eventually(func(g Gomega) {
				e := get(g)
				g.Expect(e.UID).NotTo(Equal(old.UID))
				c := meta.FindStatusCondition(e.Status.Conditions, repotv1.ConditionStalled)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(repotv1.ReasonChildNameTaken), "Stalled: %s", c.Message)
				g.Expect(c.Message).To(ContainSubstring(ledger))
			}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
			e := get(Default)
			Expect(e.Status.Progress).NotTo(BeNil())
			Expect(e.Status.Progress.RunsDone).To(BeZero(), "the new evaluation counts the old one's runs")
			Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeFalse())

			// Let the garbage collector finish: the new evaluation runs and
			// ends with its own 120 runs, each once.
			ctx, cancel = ctxTimeout(30 * time.Second)
			Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ledger}, &cm)).To(Succeed())
			Expect(cm.OwnerReferences).NotTo(BeEmpty())
			Expect(cm.OwnerReferences[0].UID).To(Equal(old.UID), "the held ledger was adopted")
			patch = client.MergeFrom(cm.DeepCopy())
			cm.Finalizers = nil
			Expect(tc.c.Patch(ctx, &cm, patch)).To(Succeed())
			cancel()
			e = complete()
			Expect(e.UID).NotTo(Equal(old.UID))
			Expect(e.Status.Progress.RunsDone).To(BeEquivalentTo(120))
			Expect(e.Status.Models[0].Methods[0].Total).To(BeEquivalentTo(120))
			Expect(e.Status.StartTime.Time).To(BeTemporally(">=", old.Status.CompletionTime.Time), "times are stored to the second")
		})

		It("lets the runner's ServiceAccount get and patch its own ledgers, and nothing else (kubectl auth can-i --list)", func() {
			// What `kubectl auth can-i --list --as=system:serviceaccount:...`
			// asks: a SelfSubjectRulesReview made as the runner, less what
			// every ServiceAccount may do (one bound to nothing).
			rules := func(sa string) []string {
				cfg, err := clientcmd.BuildConfigFromFlags("", tc.kubeconfig)
				Expect(err).NotTo(HaveOccurred())
				cfg.Impersonate.UserName = "system:serviceaccount:" + ns + ":" + sa
				cs, err := kubernetes.NewForConfig(cfg)
				Expect(err).NotTo(HaveOccurred())
				ctx, cancel := ctxTimeout(30 * time.Second)
				defer cancel()
				review, err := cs.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{
					Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}, metav1.CreateOptions{})
				Expect(err).NotTo(HaveOccurred())
				var out []string
				for _, r := range review.Status.ResourceRules {
					for _, g := range r.APIGroups {
						for _, res := range r.Resources {
							for _, v := range r.Verbs {
								out = append(out, fmt.Sprintf("%s %s/%s %v", v, g, res, r.ResourceNames))
							}
						}
					}
				}
				return out
			}
			everyone := rules("e2e-bound-to-nothing")
			var granted []string
			for _, g := range rules(build.RunnerAccessName("again")) {
				if !slices.Contains(everyone, g) {
					granted = append(granted, g)
				}
			}
			slices.Sort(granted)
			Expect(granted).To(Equal([]string{
				fmt.Sprintf("get /configmaps [%s]", ledger),
				fmt.Sprintf("patch /configmaps [%s]", ledger),
			}))
		})
	})
}

// expectSameNumbers compares a model's status with a reference summary.
// With exact, calls and tokens must match too (not with injected faults:
// retried requests cost tokens of their own in neither, but a reset
// connection may).
func expectSameNumbers(ms repotv1.ModelStatus, sum summary.Summary, exact bool) {
	var ref *summary.ModelSummary
	for i := range sum.Models {
		if sum.Models[i].Model == ms.Name {
			ref = &sum.Models[i]
		}
	}
	Expect(ref).NotTo(BeNil(), "reference summary has no model %s", ms.Name)
	Expect(ms.Methods).To(HaveLen(len(ref.Methods)))
	for i, r := range ms.Methods {
		want := ref.Methods[i]
		Expect(string(r.Method)).To(Equal(want.Method))
		what := fmt.Sprintf("model %s method %s", ms.Name, r.Method)
		Expect(r.Solved).To(BeEquivalentTo(want.Solved), what)
		Expect(r.Total).To(BeEquivalentTo(want.Total), what)
		Expect(r.Rate).To(Equal(want.Percent), what)
		Expect(r.Interval).To(Equal(want.Interval), what)
		if exact {
			Expect(r.Calls).To(Equal(want.Calls), what)
			Expect(r.PromptTokens).To(Equal(want.Tokens.Prompt), what)
			Expect(r.CompletionTokens).To(Equal(want.Tokens.Completion), what)
			Expect(r.InfraErrors).To(BeEquivalentTo(want.InfraErrors), what)
		}
	}
}
