//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/analysis/chaintree"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
	"repot.dev/repot-operator/cmd/repot/results"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// The local cluster's own artifact store (localcluster up runs versitygw
// on the real node behind a Service) as the operator's default store, the
// way make demo installs it: an evaluation without spec.artifacts streams
// its traces there. The test process reads them back from the host at the
// store pod's address (the host is on the real node's bridge, as the
// realnode specs reach pods; the Service's name does not resolve there).
var _ = Describe("the local cluster's artifact store as the operator's default", Ordered, Label("artifacts", "localstore"), func() {
	var (
		tc    *testCluster
		store *cluster.ArtifactStore
	)
	const name = "defaultstore"

	BeforeAll(func() {
		tc = bootRealCluster("localstore")
		DeferCleanup(func() { tc.stop() })
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		var err error
		store, err = cluster.LocalArtifactStore(ctx, tc.cs)
		Expect(err).NotTo(HaveOccurred())
		Expect(store.ShareCredentials(ctx, tc.cs, ns)).To(Succeed())
		var sets []string
		for _, v := range store.ChartValues() {
			sets = append(sets, "--set", v)
		}
		tc.installOperator(filepath.Join(rootDir, "charts/repot-operator"), sets...)
	})

	It("runs the store as a restricted pod", func() {
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		var pods corev1.PodList
		Expect(tc.c.List(ctx, &pods, client.InNamespace(cluster.ArtifactStoreNamespace))).To(Succeed())
		Expect(pods.Items).To(HaveLen(1))
		p := pods.Items[0]
		Expect(p.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
		Expect(p.Spec.SecurityContext.SeccompProfile).To(HaveField("Type", corev1.SeccompProfileTypeRuntimeDefault))
		for _, c := range p.Spec.Containers {
			Expect(c.SecurityContext.ReadOnlyRootFilesystem).To(HaveValue(BeTrue()), c.Name)
			Expect(c.SecurityContext.AllowPrivilegeEscalation).To(HaveValue(BeFalse()), c.Name)
			Expect(c.SecurityContext.Capabilities.Drop).To(ConsistOf(corev1.Capability("ALL")), c.Name)
		}
	})

	It("completes an evaluation without spec.artifacts with every recorded run's trace in the store, also across a runner pod killed mid-run, and chain-tree examples of all three kinds", func() {
		tc.createEvaluation(fmt.Sprintf(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: %s
spec:
  methods: [pot, repot]
  models:
  - name: sim
    simulated: {profile: weak, seed: 3}
  runner:
    shardsPerModel: 2
    inFlightPerShard: 16
%s`, name, smallRunnerYAML))
		By("deleting a runner pod once the ledgers hold runs: its shard resumes in a new pod")
		tc.deleteRunnerPodMidRun(name, 10)
		tc.awaitComplete(name, 20*time.Minute)
		e := tc.awaitArtifactsComplete(name)
		Expect(e.Status.Artifacts.Objects).To(BeNumerically(">", 0))
		Expect(e.Status.Artifacts.Endpoint).To(Equal(cluster.ArtifactStoreEndpoint), "the operator's default store")
		GinkgoWriter.Printf("status.artifacts %+v\n", *e.Status.Artifacts)

		ctx, cancel := ctxTimeout(2 * time.Minute)
		defer cancel()
		layout := artifacts.Layout{Namespace: ns, Evaluation: name, UID: string(e.UID)}
		var shards []artifacts.Shard
		for i := range int(e.Spec.ShardsPerModelOrDefault()) {
			shards = append(shards, artifacts.Shard{Model: "sim", Index: i})
		}
		// Read again: the store's pod, and its address, may have changed.
		store, err := cluster.LocalArtifactStore(ctx, tc.cs)
		Expect(err).NotTo(HaveOccurred())
		st, m, err := store.Collect(ctx, layout, e.Status.Artifacts.URL, shards)
		Expect(err).NotTo(HaveOccurred())
		Expect(m.Complete).To(BeTrue(), "manifest %+v", m)
		Expect(m.Objects).To(BeNumerically("==", e.Status.Artifacts.Objects))

		traced := map[string]bool{}
		var stored bytes.Buffer
		Expect(s3.Traces(ctx, st, m, func(line []byte) error {
			var tr contract.Trace
			if err := json.Unmarshal(line, &tr); err != nil {
				return err
			}
			traced[tr.ProblemID+"/"+tr.Method] = true
			stored.Write(append(line, '\n'))
			return nil
		})).To(Succeed())
		res, err := results.ReadEvaluationResults(ctx, tc.c, ns, name)
		Expect(err).NotTo(HaveOccurred())
		Expect(res.Records).NotTo(BeEmpty())
		for _, r := range res.Records {
			Expect(traced).To(HaveKey(r.ProblemID+"/"+r.Method), "recorded run without a stored trace")
		}

		// The objects are plain files in the store's hostPath directory
		// under the cluster's state dir.
		_, err = os.Stat(filepath.Join(tc.dir, "artifacts", cluster.ArtifactStoreBucket, layout.ShardManifestKey(shards[0])))
		Expect(err).NotTo(HaveOccurred())

		counts, err := chaintree.ExportJSONL(io.Discard, &stored, chaintree.Options{Completable: chaintree.SolverCompletable})
		Expect(err).NotTo(HaveOccurred())
		GinkgoWriter.Printf("chaintree over %d stored traces: %+v\n", len(traced), counts)
		Expect([]int{counts.Continue, counts.Answer, counts.Backtrack}).To(HaveEach(BeNumerically(">", 0)), "chaintree counts %+v", counts)
	})
	It("deletes an evaluation's stored traces with it, deleted mid-run, when spec.artifacts.retainAfterDeletion is false: its runners stop and their last uploads land before the cleanup Job runs", func() {
		const gone = "notretained"
		tc.createEvaluation(fmt.Sprintf(`apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: %s
spec:
  methods: [pot]
  models:
  - name: sim
    simulated: {profile: strong, seed: 5}
%s  runner:
    inFlightPerShard: 16
%s`, gone, notRetainedInLocalStoreYAML(), smallRunnerYAML))
		// Mid-run: runs recorded, traces uploaded, runners still going.
		var e *repotv1.RepotEvaluation
		Eventually(func(g Gomega) {
			e = tc.evaluation(g, gone)
			g.Expect(e.Finalizers).To(ContainElement(build.FinalizerArtifactsCleanup))
			g.Expect(e.Status.Progress).NotTo(BeNil())
			g.Expect(e.Status.Progress.RunsDone).To(BeNumerically(">=", 10))
			g.Expect(e.Status.Artifacts).NotTo(BeNil())
			g.Expect(e.Status.Artifacts.Objects).To(BeNumerically(">", 0))
		}).WithTimeout(10 * time.Minute).WithPolling(time.Second).Should(Succeed())
		prefix := artifacts.Layout{Namespace: ns, Evaluation: gone, UID: string(e.UID)}.EvaluationPrefix()

		ctx, cancel := ctxTimeout(5 * time.Minute)
		defer cancel()
		store, err := cluster.LocalArtifactStore(ctx, tc.cs)
		Expect(err).NotTo(HaveOccurred())
		st, err := store.HostStore()
		Expect(err).NotTo(HaveOccurred())
		objs, err := st.List(ctx, prefix)
		Expect(err).NotTo(HaveOccurred())
		Expect(objs).NotTo(BeEmpty())
		// The default-store evaluation of the spec before keeps its traces.
		kept, err := st.List(ctx, ns+"/"+name+"/")
		Expect(err).NotTo(HaveOccurred())
		Expect(kept).NotTo(BeEmpty(), "the spec before stored no traces")

		By("deleting it while it runs: the runners stop, a runner Job deletes its keys, then it goes")
		Expect(tc.c.Delete(ctx, e)).To(Succeed())
		tc.awaitGone(e, 4*time.Minute)
		objs, err = st.List(ctx, prefix)
		Expect(err).NotTo(HaveOccurred())
		Expect(objs).To(BeEmpty(), "stored traces left after the evaluation went")
		after, err := st.List(ctx, ns+"/"+name+"/")
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(HaveLen(len(kept)), "another evaluation's traces were deleted")
		tc.expectEvent(ns, e.UID, repotv1.ReasonArtifactsDeleted)
	})
})

// notRetainedInLocalStoreYAML is a RepotEvaluation's spec.artifacts (YAML,
// indented for spec) that stores its traces in the local cluster's store
// and deletes them with the evaluation (retainAfterDeletion false); the
// store's credentials must be shared into its namespace
// (ArtifactStore.ShareCredentials).
func notRetainedInLocalStoreYAML() string {
	return fmt.Sprintf(`  artifacts:
    retainAfterDeletion: false
    s3:
      endpoint: %q
      bucket: %s
      insecure: true
      credentialsSecret: %s
`, cluster.ArtifactStoreEndpoint, cluster.ArtifactStoreBucket, cluster.ArtifactStoreSecret)
}
