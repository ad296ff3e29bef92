//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
	"repot.dev/repot-operator/cmd/repot/results"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// The artifact store of these specs is a real S3 server (bin/versitygw, the
// posix backend) run on the host at the real node's address, where the
// runner pods reach it through their NetworkPolicy's rule for the store's
// IP and port, as they would reach a store outside the cluster.
func artifactsSpecs(cluster func() *testCluster) {
	Describe("traces in an S3 store from a cluster evaluation", Label("artifacts"), func() {
		var (
			tc    *testCluster
			store artifacts.Location
			creds artifacts.Credentials
		)
		const name = "stored"

		BeforeAll(func() {
			tc = cluster()
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			nodes, err := tc.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			Expect(err).NotTo(HaveOccurred())
			var ip string
			for _, a := range nodes.Items[0].Status.Addresses {
				if a.Type == corev1.NodeInternalIP {
					ip = a.Address
				}
			}
			Expect(ip).NotTo(BeEmpty(), "the real node has no InternalIP")
			l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
			Expect(err).NotTo(HaveOccurred())
			endpoint := l.Addr().String()
			Expect(l.Close()).To(Succeed())
			data := filepath.Join(tc.dir, "s3")
			Expect(os.MkdirAll(filepath.Join(data, "repot-traces"), 0o755)).To(Succeed())
			creds = artifacts.Credentials{AccessKeyID: "repote2e", SecretAccessKey: "e2e-secret-3b9f0c21"}
			vgw := exec.Command(filepath.Join(binDir, "versitygw"), "--port", endpoint, "posix", data)
			vgw.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+creds.AccessKeyID, "ROOT_SECRET_ACCESS_KEY="+creds.SecretAccessKey)
			logf, err := os.Create(filepath.Join(tc.logs, "versitygw.log"))
			Expect(err).NotTo(HaveOccurred())
			vgw.Stdout, vgw.Stderr = logf, logf
			Expect(vgw.Start()).To(Succeed())
			DeferCleanup(func() { _ = vgw.Process.Kill(); _ = vgw.Wait(); logf.Close() })
			store = artifacts.Location{Endpoint: endpoint, Bucket: "repot-traces", Insecure: true}
			st, err := s3.Open(store, creds, s3.Options{})
			Expect(err).NotTo(HaveOccurred())
			Eventually(func() error { return st.Probe(context.Background(), "", "e2e") }).WithTimeout(30 * time.Second).Should(Succeed())

			for secret, key := range map[string]string{"repot-s3": creds.SecretAccessKey, "wrong-s3": "not-the-secret"} {
				Expect(tc.c.Create(ctx, &corev1.Secret{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: secret},
					StringData: map[string]string{artifacts.EnvAccessKeyID: creds.AccessKeyID, artifacts.EnvSecretAccessKey: key},
				})).To(Succeed())
			}
		})

		manifest := func(eval, secret string) string {
			return fmt.Sprintf(`apiVersion: repot.dev/v1alpha1
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
%s  artifacts:
    s3:
      endpoint: "%s"
      bucket: %s
      insecure: true
      credentialsSecret: %s
`, eval, smallRunnerYAML, store.Endpoint, store.Bucket, secret)
		}

		It("completes with every recorded run's trace in the store, also across a runner pod killed mid-run, status.artifacts Complete, and chain-tree examples of all three kinds", func() {
			tc.createEvaluation(manifest(name, "repot-s3"))
			By("deleting a runner pod once the ledgers hold runs: its shard resumes in a new pod")
			tc.deleteRunnerPodMidRun(name, 10)
			e := tc.awaitComplete(name, 20*time.Minute)
			Expect(meta.FindStatusCondition(e.Status.Conditions, repotv1.ConditionArtifactStoreUnavailable)).To(
				And(Not(BeNil()), HaveField("Reason", repotv1.ReasonStoreWritable)))
			e = tc.awaitArtifactsComplete(name)
			Expect(e.Status.Artifacts.Objects).To(BeNumerically(">", 0))

			ctx, cancel := ctxTimeout(2 * time.Minute)
			defer cancel()
			stored, err := results.OpenStoredTraces(ctx, tc.c, ns, name, creds, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(stored.Warning()).To(BeEmpty())
			traced := map[string]bool{}
			Expect(stored.Each(ctx, func(line []byte) error {
				var tr contract.Trace
				if err := json.Unmarshal(line, &tr); err != nil {
					return err
				}
				traced[tr.ProblemID+"/"+tr.Method] = true
				return nil
			})).To(Succeed())
			res, err := results.ReadEvaluationResults(ctx, tc.c, ns, name)
			Expect(err).NotTo(HaveOccurred())
			Expect(res.Records).NotTo(BeEmpty())
			for _, r := range res.Records {
				Expect(traced).To(HaveKey(r.ProblemID+"/"+r.Method), "recorded run without a stored trace")
			}

			// The command users run, with their own credentials.
			out := filepath.Join(tc.logs, "chaintree-"+name+".jsonl")
			cmd := exec.Command(filepath.Join(binDir, "repot"), "results", "export", "--evaluation", name, "-n", ns, "--format", "chaintree", "--out", out)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+tc.kubeconfig, artifacts.EnvAccessKeyID+"="+creds.AccessKeyID, artifacts.EnvSecretAccessKey+"="+creds.SecretAccessKey)
			b, err := cmd.CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), "repot results export: %s", b)
			var cont, answer, backtrack int
			line := strings.TrimSpace(string(b))
			_, err = fmt.Sscanf(line[strings.Index(line, "continue"):], "continue %d, answer %d, backtrack %d", &cont, &answer, &backtrack)
			Expect(err).NotTo(HaveOccurred(), "export said %q", line)
			Expect([]int{cont, answer, backtrack}).To(HaveEach(BeNumerically(">", 0)), "export said %q", line)

			// The judge re-judges every stored trace, also those of the runs
			// the killed pod ran twice, and agrees with the ledgers and the
			// status.
			cmd = exec.Command(filepath.Join(binDir, "repot"), "judge", "--evaluation", name, "-n", ns)
			cmd.Env = append(os.Environ(), "KUBECONFIG="+tc.kubeconfig, artifacts.EnvAccessKeyID+"="+creds.AccessKeyID, artifacts.EnvSecretAccessKey+"="+creds.SecretAccessKey)
			b, err = cmd.CombinedOutput()
			GinkgoWriter.Printf("repot judge:\n%s\n", b)
			Expect(err).NotTo(HaveOccurred(), "repot judge: %s", b)
			Expect(string(b)).To(ContainSubstring("no disagreements"))
		})

		It("reads ArtifactStoreUnavailable, naming the credentials, before any server or runner starts with a wrong Secret", func() {
			const bad = "wrong-key"
			tc.createEvaluation(manifest(bad, "wrong-s3"))
			Eventually(func(g Gomega) {
				e := tc.evaluation(g, bad)
				c := meta.FindStatusCondition(e.Status.Conditions, repotv1.ConditionArtifactStoreUnavailable)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Status).To(Equal(metav1.ConditionTrue), "condition %+v", c)
				g.Expect(c.Message).To(ContainSubstring("credentials refused"))
				g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionStalled)).To(BeTrue())
			}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			e := &repotv1.RepotEvaluation{}
			Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: bad}, e)).To(Succeed())
			Expect(e.Status.StartTime).To(BeNil())
			var deps appsv1.DeploymentList
			Expect(tc.c.List(ctx, &deps, client.InNamespace(ns), client.MatchingLabels{build.LabelEvaluation: bad})).To(Succeed())
			Expect(deps.Items).To(BeEmpty(), "a server started with the store unavailable")
			var jobs batchv1.JobList
			Expect(tc.c.List(ctx, &jobs, client.InNamespace(ns), client.MatchingLabels{build.LabelEvaluation: bad})).To(Succeed())
			for _, j := range jobs.Items {
				Expect(j.Labels).To(HaveKeyWithValue(build.LabelArtifactsProbe, "true"), "runner Job %s started with the store unavailable", j.Name)
			}
			// The cluster is shared: the stalled evaluation's probe goes
			// with it (it retains its traces, so nothing needs the store).
			Expect(tc.c.Delete(ctx, e)).To(Succeed())
			tc.awaitGone(e, 3*time.Minute)
		})
	})
}

// deleteRunnerPodMidRun deletes a running runner pod of evaluation name
// once its ledgers hold at least runs runs (the shard then resumes in a new
// pod) and returns the pod's name.
func (tc *testCluster) deleteRunnerPodMidRun(name string, runs int) string {
	GinkgoHelper()
	var killed string
	Eventually(func(g Gomega) {
		e := tc.evaluation(g, name)
		g.Expect(e.Status.Progress).NotTo(BeNil())
		g.Expect(e.Status.Progress.RunsDone).To(BeNumerically(">=", runs))
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		var pods corev1.PodList
		g.Expect(tc.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{build.LabelEvaluation: name, build.LabelComponent: build.ComponentRunner})).To(Succeed())
		for _, p := range pods.Items {
			if p.Labels[build.LabelArtifactsProbe] == "" && p.Status.Phase == corev1.PodRunning {
				g.Expect(tc.c.Delete(ctx, &p)).To(Succeed())
				killed = p.Name
				return
			}
		}
		g.Expect(killed).NotTo(BeEmpty(), "no running runner pod")
	}).WithTimeout(5 * time.Minute).WithPolling(time.Second).Should(Succeed())
	GinkgoWriter.Println("deleted runner pod", killed)
	return killed
}

// awaitArtifactsComplete waits for a completed evaluation's last uploads
// to reach status.artifacts (Complete) and returns the evaluation.
func (tc *testCluster) awaitArtifactsComplete(name string) *repotv1.RepotEvaluation {
	GinkgoHelper()
	var e *repotv1.RepotEvaluation
	Eventually(func(g Gomega) {
		e = tc.evaluation(g, name)
		g.Expect(e.Status.Artifacts).NotTo(BeNil())
		g.Expect(e.Status.Artifacts.State).To(Equal(repotv1.ArtifactsComplete), "status.artifacts %+v", e.Status.Artifacts)
	}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	return e
}
