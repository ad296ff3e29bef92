package integration_test

import (
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// waitForAdmissionPolicies waits until the API server enforces the shipped
// policies: a policy is enforced a moment after it is created.
func waitForAdmissionPolicies() {
	probe := revtesting.MakeEvaluation("admission-probe", "default").
		VLLMWith("m", repotv1.VLLMModel{Model: "org/m", Args: []string{"--trust-remote-code"}}).Obj()
	EventuallyWithOffset(1, func(g Gomega) {
		err := k8s.Create(ctx, probe.DeepCopy())
		if err == nil {
			_ = k8s.Delete(ctx, probe.DeepCopy())
		}
		g.Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "the trust-remote-code policy is not enforced yet: %v", err)
	}).Should(Succeed())
}

// editorIn makes a user bound, in namespace ns, to the editor ClusterRole
// the project ships (config/rbac/common), authenticated by its own client
// certificate, and returns its client.
func editorIn(ns, user string) client.Client {
	GinkgoHelper()
	b, err := os.ReadFile(filepath.Join(testEnv.Root(), "config", "rbac", "common", "repotevaluation_editor_role.yaml"))
	Expect(err).NotTo(HaveOccurred())
	var role rbacv1.ClusterRole
	Expect(yaml.UnmarshalStrict(b, &role)).To(Succeed())
	role.ObjectMeta = metav1.ObjectMeta{Name: "shipped-" + role.Name}
	if err := k8s.Create(ctx, &role); err != nil && !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: user + "-editor", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
	cfg, err := testEnv.ConfigAs(ctx, framework.Identity{User: user})
	Expect(err).NotTo(HaveOccurred())
	c, err := newClient(cfg)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// grantGet lets user get one object of resource in ns.
func grantGet(ns, user, resource, name string) {
	GinkgoHelper()
	n := user + "-get-" + resource + "-" + name
	Expect(k8s.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{resource}, ResourceNames: []string{name}, Verbs: []string{"get"}}},
	})).To(Succeed())
	Expect(k8s.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: n},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	})).To(Succeed())
}

// forbiddenWith asserts err is the API server's refusal and its message
// holds every part.
func forbiddenWith(err error, parts ...string) {
	GinkgoHelper()
	Expect(err).To(HaveOccurred())
	Expect(apierrors.IsForbidden(err) || apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
	for _, p := range parts {
		Expect(err.Error()).To(ContainSubstring(p))
	}
}

// The references policy (config/admission/references.yaml): creating an
// evaluation is not a way to use Secrets, ConfigMaps or claims its author
// cannot read, since the operator sends and mounts them with its own rights.
var _ = Describe("the shipped admission policies, for an evaluation's author", func() {
	It("refuse an editor's evaluation that names a Secret, ConfigMap or claim the editor cannot read, until the editor may read it", func() {
		ns := createNamespace("authors")
		alice := editorIn(ns, "alice-"+ns)
		withKey := revtesting.MakeEvaluation("keyed", ns).Endpoint("m", "https://llm.example.com/v1", "m").APIKeySecret("team-key", "token").Obj()
		forbiddenWith(alice.Create(ctx, withKey.DeepCopy()), "Secret team-key", "alice-"+ns, "may not get")
		problems := revtesting.MakeEvaluation("problems", ns).Simulated("m", "strong", 1).
			Suite(repotv1.SuitePlanBench378).ProblemsConfigMap("other-team-problems", "problems.jsonl").Obj()
		forbiddenWith(alice.Create(ctx, problems.DeepCopy()), "ConfigMap other-team-problems")
		claim := revtesting.MakeEvaluation("claim", ns).Simulated("m", "strong", 1).ArtifactsPVC("shared-results").Obj()
		forbiddenWith(alice.Create(ctx, claim.DeepCopy()), "PersistentVolumeClaim shared-results")
		pull := revtesting.MakeEvaluation("pull", ns).Simulated("m", "strong", 1).
			Placement(repotv1.PlacementSpec{ImagePullSecrets: []repotv1.SecretName{{Name: "registry-creds"}}}).Obj()
		forbiddenWith(alice.Create(ctx, pull.DeepCopy()), "Secret registry-creds")
		schedule := &repotv1.RepotSchedule{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
			Spec:       repotv1.RepotScheduleSpec{Schedule: "0 3 * * *", EvaluationTemplate: repotv1.EvaluationTemplate{Spec: withKey.Spec}},
		}
		forbiddenWith(alice.Create(ctx, schedule.DeepCopy()), "Secret team-key")

		// Once alice may read them (and only then), the same objects are
		// accepted.
		grantGet(ns, "alice-"+ns, "secrets", "team-key")
		grantGet(ns, "alice-"+ns, "configmaps", "other-team-problems")
		grantGet(ns, "alice-"+ns, "persistentvolumeclaims", "shared-results")
		grantGet(ns, "alice-"+ns, "secrets", "registry-creds")
		for _, obj := range []client.Object{withKey, problems, claim, pull, schedule} {
			Eventually(func() error { return alice.Create(ctx, obj.DeepCopyObject().(client.Object)) }).Should(Succeed(), obj.GetName())
		}
	})

	It("check on an update only the references it adds, so an author who lost access may still label what they made", func() {
		ns := createNamespace("authors-update")
		bob := editorIn(ns, "bob-"+ns)
		// An admin made it; bob may not read its Secret.
		keyed := revtesting.MakeEvaluation("", ns).Endpoint("m", "https://llm.example.com/v1", "m").APIKeySecret("team-key", "token").Obj()
		Expect(k8s.Create(ctx, &repotv1.RepotSchedule{
			ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: ns},
			Spec:       repotv1.RepotScheduleSpec{Schedule: "0 3 * * *", Suspend: ptr.To(true), EvaluationTemplate: repotv1.EvaluationTemplate{Spec: keyed.Spec}},
		})).To(Succeed())
		var s repotv1.RepotSchedule
		Expect(bob.Get(ctx, key(ns, "nightly"), &s)).To(Succeed())
		s.Labels = map[string]string{"team": "b"}
		Expect(bob.Update(ctx, &s)).To(Succeed())
		// Adding a reference bob cannot read is refused.
		Expect(bob.Get(ctx, key(ns, "nightly"), &s)).To(Succeed())
		s.Spec.EvaluationTemplate.Spec.Placement = &repotv1.PlacementSpec{ImagePullSecrets: []repotv1.SecretName{{Name: "registry-creds"}}}
		forbiddenWith(bob.Update(ctx, &s), "Secret registry-creds")
	})

	It("refuse --trust-remote-code in a vLLM model's args, for every author", func() {
		ns := createNamespace("trust")
		for _, arg := range []string{"--trust-remote-code", "--trust_remote_code=true"} {
			e := revtesting.MakeEvaluation("trusting", ns).VLLMWith("m", repotv1.VLLMModel{Model: "org/m", Args: []string{"--dtype=auto", arg}}).Obj()
			forbiddenWith(k8s.Create(ctx, e), "--trust-remote-code", "vllm.allowTrustRemoteCode")
		}
		Expect(k8s.Create(ctx, revtesting.MakeEvaluation("plain", ns).VLLMWith("m", repotv1.VLLMModel{Model: "org/m", Args: []string{"--dtype=auto"}}).Suspend(true).Obj())).To(Succeed())
	})
})

// The operator-writes policy (config/admission/operator-writes.yaml): the
// manager's wide RBAC narrowed to the objects it makes. Every other spec of
// the suite runs the manager under it too.
var _ = Describe("the shipped admission policies, for the operator", func() {
	It("refuse the operator's writes to objects it did not label, in kube-system, of Roles or RoleBindings it would not build, and to a RepotEvaluation but its finalizer", func() {
		ns := createNamespace("operator-writes")
		as, err := newClient(managerCfg)
		Expect(err).NotTo(HaveOccurred())
		managed := map[string]string{build.LabelManagedBy: build.ManagerName}

		// Someone else's ConfigMap: not to be changed or deleted.
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: ns}, Data: map[string]string{"k": "v"}}
		Expect(k8s.Create(ctx, theirs)).To(Succeed())
		forbiddenWith(as.Delete(ctx, theirs.DeepCopy()), "managed-by=repot-operator")
		forbiddenWith(as.Patch(ctx, theirs.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"labels":{"app.kubernetes.io/managed-by":"repot-operator"}}}`))), "managed-by=repot-operator")
		forbiddenWith(as.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unlabelled", Namespace: ns}}), "managed-by=repot-operator")
		forbiddenWith(as.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: "kube-system", Labels: managed}}), "does not write in kube-system")

		// A Role wider than the runner's, or a binding to another role.
		forbiddenWith(as.Create(ctx, &rbacv1.Role{
			ObjectMeta: metav1.ObjectMeta{Name: "wide", Namespace: ns, Labels: managed},
			// Rights the operator holds (else RBAC's escalation check
			// refuses first), but on every ConfigMap, not named ones.
			Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
		}), "get and patch on named ConfigMaps")
		forbiddenWith(as.Create(ctx, &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: ns, Labels: managed},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "admin"},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "default", Namespace: ns}},
		}), "bind the Role of its own name")

		// What the operator builds passes.
		Expect(as.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "labelled", Namespace: ns, Labels: managed}})).To(Succeed())

		// A RepotEvaluation: its finalizer, and nothing else.
		e := revtesting.MakeEvaluation("held", ns).Simulated("m", "strong", 1).Suspend(true).Obj()
		Expect(k8s.Create(ctx, e)).To(Succeed())
		for _, patch := range []string{
			`{"spec":{"suspend":false}}`,
			`{"metadata":{"labels":{"x":"y"}}}`,
			`{"metadata":{"annotations":{"x":"y"}}}`,
			`{"metadata":{"finalizers":["example.com/other"]}}`,
		} {
			forbiddenWith(as.Patch(ctx, e.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(patch))), "only add or remove its finalizer")
		}
		Expect(as.Patch(ctx, e.DeepCopy(), client.RawPatch(types.MergePatchType,
			[]byte(`{"metadata":{"finalizers":["`+build.FinalizerArtifactsCleanup+`"]}}`)))).To(Succeed())
		Expect(as.Patch(ctx, e.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`)))).To(Succeed())
	})
})
