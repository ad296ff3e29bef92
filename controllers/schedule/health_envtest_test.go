package schedule_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/config/argocd"
)

// assessLive reads obj from the API server and checks its Argo CD health
// (health.lua in gopher-lua) and kstatus status. With REPOT_CAPTURE_HEALTH
// set it also stores the object for config/argocd's table test.
func assessLive(g Gomega, obj client.Object, kind, state, wantArgo, wantKstatus string) {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(repotv1.GroupVersion.String())
	u.SetKind(kind)
	g.Expect(k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), u)).To(Succeed())
	assessObject(g, u, kind, state, wantArgo, wantKstatus)
}

func assessObject(g Gomega, u *unstructured.Unstructured, kind, state, wantArgo, wantKstatus string) {
	u.SetManagedFields(nil)
	h, ks, ksMsg, err := argocd.Assess(u.Object)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect([]string{h.Status, ks}).To(Equal([]string{wantArgo, wantKstatus}), "%s %s: Argo CD %q, kstatus %q", kind, state, h.Message, ksMsg)
	if os.Getenv("REPOT_CAPTURE_HEALTH") != "" {
		b, err := json.MarshalIndent(u.Object, "", "  ")
		g.Expect(err).NotTo(HaveOccurred())
		dir := filepath.Join("..", "..", "config", "argocd", "testdata")
		g.Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
		g.Expect(os.WriteFile(filepath.Join(dir, kind+"-"+state+".json"), append(b, '\n'), 0o644)).To(Succeed())
	}
}

func TestScheduleHealth(t *testing.T) {
	g := requireEnvtest(t)
	ns := newNamespace(g)
	ctx := context.Background()

	// As applied, before the operator saw it: the API server's answer to
	// the create.
	s := makeSchedule(ns, "health", "*/5 * * * *", repotv1.ConcurrencyForbid, "m", "strong")
	raw, err := runtimeToUnstructured(s)
	g.Expect(err).NotTo(HaveOccurred())
	raw.SetNamespace(ns)
	g.Expect(k8s.Create(ctx, raw)).To(Succeed())
	assessObject(g, raw, "RepotSchedule", "Unobserved", "Progressing", "InProgress")
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(s), s)).To(Succeed())

	g.Eventually(func(g Gomega) {
		cur := getSchedule(g, s)
		g.Expect(condition(cur, repotv1.ConditionReady).Reason).To(Equal(repotv1.ReasonSuspended))
		assessLive(g, s, "RepotSchedule", "Suspended", "Suspended", "Current")
	}).Should(Succeed())

	clk.SetTime(s.CreationTimestamp.Time)
	patchSpec(g, s, func(sp *repotv1.RepotScheduleSpec) { sp.Suspend = ptr.To(false) })
	g.Eventually(func(g Gomega) {
		cur := getSchedule(g, s)
		g.Expect(condition(cur, repotv1.ConditionReady).Reason).To(Equal(repotv1.ReasonScheduled))
		assessLive(g, s, "RepotSchedule", "Scheduled", "Healthy", "Current")
	}).Should(Succeed())

	// Day 30 of February passes the API server's syntax check but never
	// comes: the operator says so and the schedule is stalled.
	never := makeSchedule(ns, "never", "0 0 30 2 *", repotv1.ConcurrencyForbid, "m", "strong")
	never.Spec.Suspend = ptr.To(false)
	g.Expect(k8s.Create(ctx, never)).To(Succeed())
	g.Eventually(func(g Gomega) {
		cur := getSchedule(g, never)
		g.Expect(condition(cur, repotv1.ConditionStalled).Status).To(Equal(metav1.ConditionTrue))
		g.Expect(condition(cur, repotv1.ConditionStalled).Message).To(ContainSubstring("never fires"))
		assessLive(g, never, "RepotSchedule", "NeverFires", "Degraded", "Failed")
	}).Should(Succeed())
}

func runtimeToUnstructured(s *repotv1.RepotSchedule) (*unstructured.Unstructured, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &u.Object); err != nil {
		return nil, err
	}
	u.SetAPIVersion(repotv1.GroupVersion.String())
	u.SetKind("RepotSchedule")
	unstructured.RemoveNestedField(u.Object, "status")
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	return u, nil
}
