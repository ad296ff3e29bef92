package integration_test

import (
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// Every spec of this suite runs the manager as the operator's
// ServiceAccount bound to the ClusterRole generated from the controller's
// RBAC markers (config/rbac/role.yaml; see BeforeSuite). These specs check
// that it is so, and drive the paths that need the rarer verbs: granting
// the runner Role, undoing edits to what the operator owns.
var _ = Describe("with only the shipped RBAC", func() {
	It("runs the manager as the operator's ServiceAccount, which holds nothing beyond the shipped role", func() {
		as, err := newClient(managerCfg)
		Expect(err).NotTo(HaveOccurred())
		review := &authenticationv1.SelfSubjectReview{}
		Expect(as.Create(ctx, review)).To(Succeed())
		id := framework.ManagerServiceAccount
		Expect(review.Status.UserInfo.Username).To(Equal("system:serviceaccount:" + id.ServiceAccountNamespace + ":" + id.ServiceAccount))
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "get", Resource: "secrets", Namespace: "default"},
			{Verb: "delete", Resource: "namespaces"},
			{Verb: "create", Resource: "pods", Namespace: "default"},
			{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"},
		} {
			sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}}
			Expect(as.Create(ctx, sar)).To(Succeed())
			Expect(sar.Status.Allowed).To(BeFalse(), "the manager may %s %s", attr.Verb, attr.Resource)
		}
		// Where the OwnerReferencesPermissionEnforcement admission plugin
		// runs (OpenShift, hardened clusters), an owner reference with
		// blockOwnerDeletion, which every child carries, needs update on
		// the owner's finalizers.
		for _, attr := range []authorizationv1.ResourceAttributes{
			{Verb: "update", Group: "repot.dev", Resource: "repotevaluations", Subresource: "finalizers", Namespace: "default"},
			{Verb: "update", Group: "repot.dev", Resource: "repotschedules", Subresource: "finalizers", Namespace: "default"},
		} {
			sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &attr}}
			Expect(as.Create(ctx, sar)).To(Succeed())
			Expect(sar.Status.Allowed).To(BeTrue(), "the manager may not update %s/finalizers", attr.Resource)
		}
	})

	It("runs an evaluation from creation to completion", func() {
		ns := createNamespace("rbac")
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(2).Obj())).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
		Expect(exists(&rbacv1.RoleBinding{}, ns, "ev-runner")()).To(BeTrue(), "the operator may grant the runner Role")
		// The operator may update the NetworkPolicies and the Role it
		// owns: an edit by hand is undone.
		var np networkingv1.NetworkPolicy
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: build.ServerPolicyName("ev")}, &np)).To(Succeed())
		want := np.Spec
		np.Spec.Ingress = nil
		Expect(k8s.Update(ctx, &np)).To(Succeed())
		var role rbacv1.Role
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ev-runner"}, &role)).To(Succeed())
		role.Rules[0].Verbs = []string{"get"}
		Expect(k8s.Update(ctx, &role)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: build.ServerPolicyName("ev")}, &np)).To(Succeed())
			g.Expect(np.Spec).To(Equal(want))
			g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ev-runner"}, &role)).To(Succeed())
			g.Expect(role.Rules[0].Verbs).To(Equal([]string{"get", "patch"}))
		}).Should(Succeed())
		writeLedger(ns, build.LedgerName("ev", "m", 1), rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))
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

// The namespaced install (config/namespaced, the chart's watchNamespace):
// a manager that watches one namespace, holding its writes in a Role there
// and only reads of cluster-scoped kinds cluster-wide.
var _ = Describe("with only the shipped namespaced RBAC", Ordered, func() {
	var ns string
	BeforeAll(func() {
		ns = createNamespace("namespaced")
		restricted, err := testEnv.ConfigAsShippedNamespacedManager(ctx, ns, ns+"-")
		Expect(err).NotTo(HaveOccurred())
		Expect(mgr.Stop()).To(Succeed())
		mgr, err = startManagerIn(ns, restricted, clk, nil, nil)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { restartManager(nil) })
	})

	It("runs an evaluation in its namespace from creation to completion", func() {
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj())).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)
		Eventually(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "m"))).Should(BeTrue())
		Eventually(exists(&rbacv1.RoleBinding{}, ns, build.RunnerAccessName("ev"))).Should(BeTrue(), "the operator may grant the runner Role")
		writeLedger(ns, build.LedgerName("ev", "m", 0), rec("m", "p1", "pot", true, contract.RouteInitialSuccess, 1))
		finishJob(ns, build.RunnerJobName("ev", "m"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(e.Status.Summary.State).To(Equal(repotv1.StateComplete))
		})
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeFalse())
	})

	It("may write in its namespace and nowhere else, as the API server's authorizer answers", func() {
		restricted, err := testEnv.ConfigAs(ctx, framework.Identity{ServiceAccountNamespace: ns, ServiceAccount: framework.ManagerServiceAccount.ServiceAccount, Impersonate: true})
		Expect(err).NotTo(HaveOccurred())
		as, err := newClient(restricted)
		Expect(err).NotTo(HaveOccurred())
		for _, tc := range []struct {
			attr  authorizationv1.ResourceAttributes
			allow bool
		}{
			{authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Namespace: ns}, true},
			{authorizationv1.ResourceAttributes{Verb: "create", Group: "apps", Resource: "deployments", Namespace: ns}, true},
			{authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "rolebindings", Namespace: "kube-system"}, false},
			{authorizationv1.ResourceAttributes{Verb: "update", Group: "rbac.authorization.k8s.io", Resource: "roles", Namespace: "default"}, false},
			{authorizationv1.ResourceAttributes{Verb: "create", Group: "apps", Resource: "deployments", Namespace: "default"}, false},
			{authorizationv1.ResourceAttributes{Verb: "delete", Group: "batch", Resource: "jobs", Namespace: "kube-system"}, false},
			{authorizationv1.ResourceAttributes{Verb: "create", Group: "rbac.authorization.k8s.io", Resource: "clusterrolebindings"}, false},
			{authorizationv1.ResourceAttributes{Verb: "get", Resource: "secrets", Namespace: ns}, false},
		} {
			sar := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &tc.attr}}
			Expect(as.Create(ctx, sar)).To(Succeed())
			Expect(sar.Status.Allowed).To(Equal(tc.allow), "%s %s/%s in %q", tc.attr.Verb, tc.attr.Group, tc.attr.Resource, tc.attr.Namespace)
		}
	})

	It("leaves evaluations of other namespaces alone", func() {
		other := createNamespace("elsewhere")
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("ev", other).Simulated("m", "strong", 1).Obj())).To(Succeed())
		Consistently(exists(&appsv1.Deployment{}, other, build.ServerName("ev", "m"))).Should(BeFalse())
	})
})

// The runner's ServiceAccount may get and patch its own evaluation's
// ledgers and nothing else: what `kubectl auth can-i --list` shows for it,
// asked of the API server's authorizer with SubjectAccessReviews.
var _ = Describe("the runner ServiceAccount", func() {
	It("may get and patch its own ledgers, and nothing else", func() {
		ns := createNamespace("runner-rbac")
		// puzzlezoo-775 x 4 methods / 2 shards: each shard's ledger has spill
		// ConfigMaps, which the runner may patch too (but not create).
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Suite(repotv1.SuitePuzzleZoo775).Shards(2).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("other", ns).Simulated("m", "strong", 1).Obj())).To(Succeed())
		access := build.RunnerAccessName("ev")
		Eventually(exists(&rbacv1.RoleBinding{}, ns, access)).Should(BeTrue())
		Eventually(exists(&rbacv1.Role{}, ns, build.RunnerAccessName("other"))).Should(BeTrue())

		user := "system:serviceaccount:" + ns + ":" + access
		groups := framework.ServiceAccountGroups(ns)
		allowed := func(verb, name string) bool {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: user, Groups: groups,
				ResourceAttributes: &authorizationv1.ResourceAttributes{
					Namespace: ns, Verb: verb, Resource: "configmaps", Name: name,
				},
			}}
			Expect(k8s.Create(ctx, sar)).To(Succeed())
			return sar.Status.Allowed
		}
		spills := build.LedgerSpills(ev)
		Expect(spills).To(BeNumerically(">", 0))
		var own []string
		for s := range 2 {
			l := build.LedgerName("ev", "m", s)
			own = append(own, l)
			for n := 1; n <= spills; n++ {
				own = append(own, contract.LedgerSpillName(l, n))
			}
		}
		Expect(allowed("get", contract.LedgerSpillName(build.LedgerName("ev", "m", 0), spills+1))).To(BeFalse(), "a spill past the last one")
		for _, name := range own {
			Expect(allowed("get", name)).To(BeTrue(), "get %s", name)
			Expect(allowed("patch", name)).To(BeTrue(), "patch %s", name)
			for _, verb := range []string{"update", "delete", "watch"} {
				Expect(allowed(verb, name)).To(BeFalse(), "%s %s", verb, name)
			}
		}
		for _, verb := range []string{"list", "watch", "create", "deletecollection"} {
			Expect(allowed(verb, "")).To(BeFalse(), "%s configmaps", verb)
		}
		theirs := build.LedgerName("other", "m", 0)
		for _, verb := range []string{"get", "patch", "update"} {
			Expect(allowed(verb, theirs)).To(BeFalse(), "%s another evaluation's ledger %s", verb, theirs)
		}

		// The `kubectl auth can-i --list` view, as the ServiceAccount: beyond
		// what every ServiceAccount of the namespace holds (the
		// self-reviews, the cluster's public reads), its only rule is get
		// and patch on its own ledgers.
		canList := func(sa string) []authorizationv1.ResourceRule {
			imp, err := testEnv.ConfigAs(ctx, framework.Identity{ServiceAccountNamespace: ns, ServiceAccount: sa, Impersonate: true})
			Expect(err).NotTo(HaveOccurred())
			as, err := newClient(imp)
			Expect(err).NotTo(HaveOccurred())
			review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: ns}}
			Expect(as.Create(ctx, review)).To(Succeed())
			return review.Status.ResourceRules
		}
		baseline := canList("nobody")
		var rules []authorizationv1.ResourceRule
		for _, r := range canList(access) {
			if !slices.ContainsFunc(baseline, func(b authorizationv1.ResourceRule) bool { return equality.Semantic.DeepEqual(b, r) }) {
				rules = append(rules, r)
			}
		}
		Expect(rules).To(ConsistOf(authorizationv1.ResourceRule{
			Verbs: []string{"get", "patch"}, APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: own,
		}))
	})
})
