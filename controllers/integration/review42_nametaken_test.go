package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// review42: the snapshot looks the runner path's names up
// (RunnerPathChildren) through the manager's cached client, whose cache
// holds only objects labelled app.kubernetes.io/managed-by=repot-operator
// (CacheOptions). A name a tenant's own object holds (no such label: a
// ServiceAccount, a ConfigMap, a Job someone made by hand or another tool
// made) reads NotFound there, so the first plan never knows the runner path
// is blocked: the server never starts its release clock and holds its GPUs
// for good, while the status (from the create's AlreadyExists, read through
// the API reader) does say ChildNameTaken.
var _ = Describe("review42: a runner path name an unlabelled object holds", func() {
	It("starts the server's release clock", func() {
		ns := createNamespace("review42-taken")
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: build.RunnerAccessName("ev")}}
		Expect(k8s.Create(ctx, sa)).To(Succeed())
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("m", "strong", 1).Shards(1).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		Eventually(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "m"))).Should(BeTrue())
		setServerReady(ns, "ev", "m", true)
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			c := condition(e, repotv1.ConditionStalled)
			g.Expect(c.Reason).To(Equal(repotv1.ReasonChildNameTaken))
			g.Expect(c.Message).To(ContainSubstring("ServiceAccount " + sa.Name))
			var d appsv1.Deployment
			g.Expect(k8s.Get(ctx, key(ns, build.ServerName("ev", "m")), &d)).To(Succeed())
			g.Expect(d.Annotations).To(HaveKey(build.AnnotationStalledSince),
				"the server holds its GPUs with no release clock: the decision never saw the taken name")
		})
	})
})
