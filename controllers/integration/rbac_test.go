package integration_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/runner/summary"
)

// This spec runs the manager as a user that holds only the ClusterRole
// generated from the controller's RBAC markers (config/rbac/role.yaml), so
// a missing permission, or a runner Role the operator may not grant, fails
// it.
var _ = Describe("with only the generated RBAC", Ordered, func() {
	BeforeAll(func() {
		root, err := repoRoot()
		Expect(err).NotTo(HaveOccurred())
		b, err := os.ReadFile(filepath.Join(root, "config", "rbac", "role.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var role rbacv1.ClusterRole
		Expect(yaml.Unmarshal(b, &role)).To(Succeed())
		role.Name = "repot-test-manager-role"
		Expect(k8s.Create(ctx, &role)).To(Succeed())
		const user = "repot-operator-test"
		Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "repot-test-manager"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
		})).To(Succeed())
		u, err := testEnv.AddUser(envtest.User{Name: user}, nil)
		Expect(err).NotTo(HaveOccurred())
		restricted := u.Config()
		restricted.QPS, restricted.Burst = cfg.QPS, cfg.Burst
		Expect(mgr.stop()).To(Succeed())
		mgr, err = startManager(restricted, clk, nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { restartManager(nil) })
	})

	It("runs an evaluation from creation to completion", func() {
		ns := createNamespace("rbac")
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(2).Obj())).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
		Expect(exists(&rbacv1.RoleBinding{}, ns, "ev-runner")()).To(BeTrue(), "the operator may grant the runner Role")
		writeLedger(ns, build.LedgerName("ev", "m", 1), rec("m", "p1", "pot", true, summary.RouteInitialSuccess, 1))
		setSuspend(ns, "ev", true)
		Eventually(jobSuspended(ns)).Should(BeTrue())
		setSuspend(ns, "ev", false)
		Eventually(serverReplicas(ns)).Should(Equal(int32(1)))
		finishJob(ns, build.RunnerJobName("ev", "m"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateComplete))
			g.Expect(e.Status.Progress.RunsDone).To(Equal(int32(1)))
		})
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeFalse())
	})
})
