package integration_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"repot.dev/repot-operator/analysis/chaintree"
	"repot.dev/repot-operator/analysis/report"
	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/artifacts/s3"
	"repot.dev/repot-operator/artifacts/s3test"
	"repot.dev/repot-operator/cmd/repot"
	"repot.dev/repot-operator/cmd/repot/results"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/runner/judge"
)

var _ = Describe("an evaluation with an S3 artifact store", func() {
	It("probes the store as a runner before anything starts, and its stored traces export as chain-tree examples", func() {
		srv := s3test.Start(GinkgoT())
		ns := createNamespace("artifacts")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(2).
			ArtifactsS3(repotv1.S3Store{Endpoint: srv.Endpoint, Bucket: srv.Bucket, Insecure: true, CredentialsSecret: "s3"}).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())

		By("creating the probe Job as a runner, and no server while it has not passed")
		probe := &batchv1.Job{}
		Eventually(exists(probe, ns, build.ArtifactsProbeJobName("ev"))).Should(BeTrue())
		Expect(k8s.Get(ctx, key(ns, build.ArtifactsProbeJobName("ev")), probe)).To(Succeed())
		Expect(probe.Spec.Template.Spec.ServiceAccountName).To(Equal(build.RunnerAccessName("ev")))
		Expect(probe.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--artifacts-bucket=" + srv.Bucket))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			c := findCond(e.Status.Conditions, repotv1.ConditionArtifactStoreUnavailable)
			g.Expect(c).NotTo(BeNil())
			g.Expect(c.Reason).To(Equal(repotv1.ReasonProbingStore))
			g.Expect(e.Status.Artifacts).NotTo(BeNil())
			g.Expect(e.Status.Artifacts.Endpoint).To(Equal(srv.Endpoint))
		})
		Consistently(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m")), "3s").Should(BeFalse(), "a server started before the store probe passed")
		e := getEval(ns, "ev")
		Expect(e.Status.StartTime).To(BeNil())

		By("replacing the probe when the store changes before the start (the operator deletes its Job with the RBAC it ships)")
		setPrefix(ns, "ev", "team-a")
		Eventually(func(g Gomega) {
			j := &batchv1.Job{}
			g.Expect(k8s.Get(ctx, key(ns, build.ArtifactsProbeJobName("ev")), j)).To(Succeed())
			g.Expect(j.UID).NotTo(Equal(probe.UID), "the probe of the old store is still there")
			g.Expect(j.Spec.Template.Spec.Containers[0].Args).To(ContainElement("--artifacts-prefix=team-a"))
		}).Should(Succeed())
		setPrefix(ns, "ev", "")
		Eventually(func(g Gomega) {
			j := &batchv1.Job{}
			g.Expect(k8s.Get(ctx, key(ns, build.ArtifactsProbeJobName("ev")), j)).To(Succeed())
			g.Expect(j.Spec.Template.Spec.Containers[0].Args).NotTo(ContainElement("--artifacts-prefix=team-a"))
		}).Should(Succeed())
		e = getEval(ns, "ev")

		By("uploading the traces of two shards as their ledger sidecars do")
		fixture, err := os.ReadFile("../../cmd/repot/testdata/traces.jsonl")
		Expect(err).NotTo(HaveOccurred())
		// The fixture's runs were made with the model "sim"; here they are
		// the evaluation's model's.
		lines := strings.SplitAfter(strings.TrimSpace(strings.ReplaceAll(string(fixture), `"model":"sim"`, `"model":"m"`)), "\n")
		Expect(lines).To(HaveLen(3))
		layout := artifacts.Layout{Namespace: ns, Evaluation: "ev", UID: string(e.UID)}
		st := srv.Open(GinkgoT(), "")
		for shard, part := range [][]string{lines[:1], lines[1:]} {
			dir := GinkgoT().TempDir()
			path := dir + "/traces.jsonl"
			Expect(os.WriteFile(path, []byte(strings.Join(part, "")+"\n"), 0o644)).To(Succeed())
			u := &s3.ShardUploader{Store: st, Layout: layout, Shard: artifacts.Shard{Model: "m", Index: shard}, Path: path}
			_, err := u.Finish(ctx)
			Expect(err).NotTo(HaveOccurred())
		}

		By("reading them back through status.artifacts and exporting them")
		stored, err := results.OpenStoredTraces(ctx, k8s, ns, "ev", srv.Creds, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored.Warning()).To(BeEmpty())
		Expect(stored.Manifest.Objects).To(Equal(2))
		var out bytes.Buffer
		var total chaintree.Counts
		Expect(stored.Each(ctx, func(line []byte) error {
			c, err := chaintree.ExportJSONL(&out, bytes.NewReader(line), chaintree.Options{Trace: true, Completable: chaintree.SolverCompletable})
			total.Continue, total.Answer, total.Backtrack = total.Continue+c.Continue, total.Answer+c.Answer, total.Backtrack+c.Backtrack
			return err
		})).To(Succeed())
		// The same examples as the three traces give from a file
		// (cmd/repot's TestResultsExportChaintree).
		Expect(total).To(Equal(chaintree.Counts{Continue: 8, Answer: 2, Backtrack: 1}))

		By("re-judging the stored traces (repot judge): the judge agrees with each trace, and no ledger holds their records")
		j, err := judge.New(string(e.Spec.Suite), nil, judge.Options{})
		Expect(err).NotTo(HaveOccurred())
		var verdicts []contract.TraceVerdict
		n := 0
		Expect(stored.Each(ctx, func(line []byte) error {
			if n++; len(bytes.TrimSpace(line)) > 0 {
				verdicts = append(verdicts, j.Line(n, line))
			}
			return nil
		})).To(Succeed())
		res, err := results.ReadEvaluationResults(ctx, k8s, ns, "ev")
		Expect(err).NotTo(HaveOccurred())
		rep := results.CompareJudged(res.Evaluation, res.Records, verdicts)
		// The status's rows of the evaluation's model m (nothing recorded,
		// nothing solved); the fixture's three repot traces, uploaded as
		// m's, have no ledger record.
		Expect(rep.Rows).To(HaveLen(4))
		for _, r := range rep.Rows {
			if r.Method == "repot" {
				Expect(r).To(Equal(results.JudgeRow{Model: "m", Method: "repot", Runs: 3, TracesSolved: 2, JudgeSolved: 2, Disagreements: 3}))
				continue
			}
			Expect(r).To(Equal(results.JudgeRow{Model: "m", Method: r.Method}))
		}
		Expect(rep.Disagreements).To(HaveLen(3))
		Expect(rep.Malformed).To(BeEmpty())
		for _, d := range rep.Disagreements {
			Expect(d.What).To(HavePrefix("no ledger record;"), "the judge differs from a trace: %+v", d)
		}

		By("running repot judge itself, which exits non-zero on the disagreements and says what to set without a store")
		user, err := testEnv.AddUser(envtest.User{Name: "judge-reader", Groups: []string{"system:masters"}})
		Expect(err).NotTo(HaveOccurred())
		kc, err := user.KubeConfig()
		Expect(err).NotTo(HaveOccurred())
		kubeconfig := filepath.Join(GinkgoT().TempDir(), "kubeconfig")
		Expect(os.WriteFile(kubeconfig, kc, 0o600)).To(Succeed())
		GinkgoT().Setenv(artifacts.EnvAccessKeyID, srv.Creds.AccessKeyID)
		GinkgoT().Setenv(artifacts.EnvSecretAccessKey, srv.Creds.SecretAccessKey)
		judgeCmd := func(name string) (string, error) {
			root := repot.NewRoot()
			var out strings.Builder
			root.SetOut(&out)
			root.SetErr(&out)
			root.SetArgs([]string{"judge", "--evaluation", name, "-n", ns, "--kubeconfig", kubeconfig})
			err := root.ExecuteContext(ctx)
			return out.String(), err
		}
		table, err := judgeCmd("ev")
		Expect(err).To(MatchError(ContainSubstring("3 disagreements")))
		Expect(table).To(MatchRegexp(`\n\s*m\s+repot\s+3\s+0\s+0\s+2\s+2\s+0\s+3\n`))
		Expect(table).NotTo(ContainSubstring("not traces"))
		Expect(table).To(ContainSubstring("m repot apple_checker_n02_seed0014_template00: no ledger record; judge: call 3 (repair from move 0)"))
		By("linking a report's failed run to its trace page, read from the store as repot report --evaluation does")
		failed := contract.Record{Model: "m", ProblemID: "apple_checker_n02_seed0014_template00", Environment: "checker_jumping", Complexity: 2, Method: "repot", StoppedReason: "program_error"}
		src := report.FromRecords(ns+"/ev", report.OriginEvaluation, []contract.Record{failed})
		src.Traces = results.ReportTraces(ctx, k8s, getEval(ns, "ev"), srv.Creds, "")
		Expect(src.Traces.Problem).To(BeEmpty())
		page := filepath.Join(GinkgoT().TempDir(), "ev.html")
		r := report.Report{Sources: []report.Source{src}}
		var warn bytes.Buffer
		linked, err := report.WriteTracePages(ctx, page, &r, &warn)
		Expect(err).NotTo(HaveOccurred())
		Expect(linked).To(Equal(1), warn.String())
		Expect(warn.String()).To(BeEmpty())
		tracePage, err := os.ReadFile(filepath.Join(filepath.Dir(page), filepath.FromSlash(r.Sources[0].Failures.Runs[0].Href)))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(tracePage)).To(ContainSubstring("apple_checker_n02_seed0014_template00"))
		Expect(string(tracePage)).To(ContainSubstring("program_error"))

		By("running repot report --evaluation --store-endpoint as a user does, with the store's credentials in the environment")
		ledger := build.LedgerConfigMaps(e, &e.Spec.Models[0])[0]
		line, err := json.Marshal(failed)
		Expect(err).NotTo(HaveOccurred())
		ledger.Data = map[string]string{contract.LedgerRecordsKey: string(line) + "\n"}
		Expect(k8s.Create(ctx, ledger)).To(Succeed())
		// The judge's user, kubeconfig and credentials above.
		dir := GinkgoT().TempDir()
		root := repot.NewRoot()
		var stdout, stderr bytes.Buffer
		root.SetOut(&stdout)
		root.SetErr(&stderr)
		userPage := filepath.Join(dir, "ev.html")
		root.SetArgs([]string{"report", "--kubeconfig", kubeconfig, "-n", ns, "--evaluation", "ev", "--store-endpoint", srv.Endpoint, "-o", userPage})
		Expect(root.ExecuteContext(ctx)).To(Succeed(), stderr.String())
		Expect(stdout.String()).To(ContainSubstring("1 of 1 failed runs linked to their traces"), stderr.String())
		html, err := os.ReadFile(userPage)
		Expect(err).NotTo(HaveOccurred())
		m := regexp.MustCompile(`<a href="(\./ev-traces/[^"]+)">apple_checker_n02_seed0014_template00</a>`).FindSubmatch(html)
		Expect(m).NotTo(BeNil(), string(html))
		tracePage, err = os.ReadFile(filepath.Join(dir, filepath.FromSlash(string(m[1]))))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(tracePage)).To(ContainSubstring("program_error"))

		By("refusing an object replaced after it was listed")
		_, err = st.PutBytes(ctx, stored.Manifest.Shards[0].Objects[0].Key, []byte(`{"problem_id":"forged"}`+"\n"))
		Expect(err).NotTo(HaveOccurred())
		err = stored.Each(ctx, func([]byte) error { return nil })
		Expect(err).To(MatchError(ContainSubstring("the manifest says")))

		By("writing the report without links, saying why, when the store's objects do not match")
		r = report.Report{Sources: []report.Source{src}}
		warn.Reset()
		linked, err = report.WriteTracePages(ctx, page, &r, &warn)
		Expect(err).NotTo(HaveOccurred())
		Expect(linked).To(BeZero())
		Expect(warn.String()).To(ContainSubstring("the manifest says"))
		Expect(r.Sources[0].Failures.Problem).To(ContainSubstring("the manifest says"))

		By("saying what to set for an evaluation without a store")
		plain := revtesting.MakeEvaluation("plain", ns).Simulated("m", "strong", 1).Obj()
		Expect(k8s.Create(ctx, plain)).To(Succeed())
		_, err = results.OpenStoredTraces(ctx, k8s, ns, "plain", srv.Creds, "")
		Expect(err).To(MatchError(ContainSubstring("has no artifact store")))
		_, err = judgeCmd("plain")
		Expect(err).To(MatchError(ContainSubstring("set spec.artifacts.s3 (or the operator's default store, the chart's artifacts.s3.endpoint)")))
		Expect(results.ReportTraces(ctx, k8s, getEval(ns, "plain"), srv.Creds, "").Missing).To(ContainSubstring("set spec.artifacts.s3"))
	})
})

// setPrefix edits spec.artifacts.s3.prefix, retrying on the conflicts the
// operator's status writes cause.
func setPrefix(ns, name, prefix string) {
	Eventually(func() error {
		e := getEval(ns, name)
		e.Spec.Artifacts.S3.Prefix = prefix
		return k8s.Update(ctx, e)
	}).Should(Succeed())
}

func findCond(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

var _ = Describe("an evaluation whose stored traces must not outlive it", func() {
	It("holds a finalizer, stops its servers on deletion, deletes its keys with a runner Job, then goes", func() {
		srv := s3test.Start(GinkgoT())
		ns := createNamespace("retention")
		ev := revtesting.MakeEvaluation("gone", ns).Simulated("m", "strong", 1).
			ArtifactsS3(repotv1.S3Store{Endpoint: srv.Endpoint, Bucket: srv.Bucket, Insecure: true, CredentialsSecret: "s3"}).
			RetainAfterDeletion(false).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())

		By("adding the finalizer before anything starts (the patch the shipped ClusterRole and admission policy allow)")
		eventuallyEval(ns, "gone", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Finalizers).To(ContainElement(build.FinalizerArtifactsCleanup))
		})
		finishJob(ns, build.ArtifactsProbeJobName("gone"))
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("gone", "m"))).Should(BeTrue())

		By("storing traces under its prefix, and another evaluation's beside them")
		e := getEval(ns, "gone")
		st := srv.Open(GinkgoT(), "")
		own := artifacts.Layout{Namespace: ns, Evaluation: "gone", UID: string(e.UID)}
		other := artifacts.Layout{Namespace: ns, Evaluation: "gone", UID: "0f1c2a9e-52b1-4c3e-9d8f-0a1b2c3d4e5f"}
		for _, l := range []artifacts.Layout{own, other} {
			_, err := st.PutBytes(ctx, l.SegmentKey(artifacts.Shard{Model: "m"}, 0), []byte("{}\n"))
			Expect(err).NotTo(HaveOccurred())
		}

		By("deleting it: its server goes first, then the cleanup Job runs as a runner")
		Expect(k8s.Delete(ctx, getEval(ns, "gone"))).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("gone", "m"))).Should(BeFalse())
		cleanup := &batchv1.Job{}
		Eventually(exists(cleanup, ns, build.ArtifactsCleanupJobName("gone"))).Should(BeTrue())
		Expect(k8s.Get(ctx, key(ns, build.ArtifactsCleanupJobName("gone")), cleanup)).To(Succeed())
		Expect(cleanup.Spec.Template.Spec.ServiceAccountName).To(Equal(build.RunnerAccessName("gone")))
		Expect(exists(&repotv1.RepotEvaluation{}, ns, "gone")()).To(BeTrue(), "the evaluation went before its traces")

		By("running the Job's command as its pod would, against the real store")
		runContainer(cleanup.Spec.Template.Spec.Containers[0], ns, srv.Creds)
		left, err := st.List(ctx, own.EvaluationPrefix())
		Expect(err).NotTo(HaveOccurred())
		Expect(left).To(BeEmpty())
		kept, err := st.List(ctx, other.EvaluationPrefix())
		Expect(err).NotTo(HaveOccurred())
		Expect(kept).To(HaveLen(1), "another evaluation's traces were deleted too")

		By("letting it go once the Job completed")
		finishJob(ns, build.ArtifactsCleanupJobName("gone"))
		Eventually(exists(&repotv1.RepotEvaluation{}, ns, "gone")).Should(BeFalse())
	})
})

// runContainer plays the kubelet for a container of the operator's image:
// it runs the container's repot command in-process, with the pod's
// namespace and the store's credentials in the environment.
func runContainer(c corev1.Container, ns string, creds artifacts.Credentials) {
	GinkgoHelper()
	GinkgoT().Setenv(artifacts.EnvAccessKeyID, creds.AccessKeyID)
	GinkgoT().Setenv(artifacts.EnvSecretAccessKey, creds.SecretAccessKey)
	Expect(c.Command).To(Equal([]string{"repot"}))
	root := repot.NewRoot()
	var args []string
	for _, a := range c.Args {
		args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", ns))
	}
	root.SetArgs(append(args, "--termination-message="))
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&out)
	Expect(root.Execute()).To(Succeed(), out.String())
}
