package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// spec.placement reaches every child: labels and annotations on every
// object and pod, priority and pull secrets on every pod, node placement on
// runner pods and the scheduler on server pods; the operator's labels win.
func TestPlacementReachesEveryChild(t *testing.T) {
	tol := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "evals", Effect: corev1.TaintEffectNoSchedule}
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("sim", "strong", 1).Shards(1).Placement(repotv1.PlacementSpec{
		PriorityClassName: "batch-low",
		ImagePullSecrets:  []repotv1.SecretName{{Name: "registry-creds"}},
		Labels:            []repotv1.MetadataPair{{Key: "example.com/cost-center", Value: "ml"}},
		Annotations:       []repotv1.MetadataPair{{Key: "example.com/owner", Value: "evals"}},
		Runner: &repotv1.RunnerPlacement{
			NodeSelector: []repotv1.NodeLabel{{Key: "node-pool", Value: "cpu"}},
			Tolerations:  []corev1.Toleration{tol},
		},
		Server: &repotv1.ServerPlacement{SchedulerName: "gpu-scheduler"},
	}).Obj()
	w := newWorld()
	settle(e, w, t0)
	setServerReady(w, "ev", "sim", true)
	settle(e, w, t0)

	var objs []interface {
		GetName() string
		GetLabels() map[string]string
		GetAnnotations() map[string]string
	}
	for i := range w.Deployments {
		objs = append(objs, &w.Deployments[i])
	}
	for i := range w.Services {
		objs = append(objs, &w.Services[i])
	}
	for i := range w.Jobs {
		objs = append(objs, &w.Jobs[i])
	}
	for i := range w.Ledgers {
		objs = append(objs, &w.Ledgers[i])
	}
	objs = append(objs, &w.ServiceAccounts[0], &w.Roles[0], &w.RoleBindings[0], &w.NetworkPolicies[0])
	for _, o := range objs {
		if o.GetLabels()["example.com/cost-center"] != "ml" || o.GetAnnotations()["example.com/owner"] != "evals" {
			t.Errorf("%s lacks the placement label or annotation: %v %v", o.GetName(), o.GetLabels(), o.GetAnnotations())
		}
		if o.GetLabels()[build.LabelManagedBy] != build.ManagerName {
			t.Errorf("%s lost the operator's managed-by label", o.GetName())
		}
	}
	if len(w.Jobs) != 1 || len(w.Deployments) != 1 {
		t.Fatalf("want one Job and one Deployment, got %d and %d", len(w.Jobs), len(w.Deployments))
	}
	server, runner := w.Deployments[0].Spec.Template, w.Jobs[0].Spec.Template
	for name, pt := range map[string]corev1.PodTemplateSpec{"server": server, "runner": runner} {
		if pt.Spec.PriorityClassName != "batch-low" || len(pt.Spec.ImagePullSecrets) != 1 || pt.Spec.ImagePullSecrets[0].Name != "registry-creds" {
			t.Errorf("%s pod: priority %q pull secrets %v", name, pt.Spec.PriorityClassName, pt.Spec.ImagePullSecrets)
		}
		if pt.Labels["example.com/cost-center"] != "ml" || pt.Annotations["example.com/owner"] != "evals" {
			t.Errorf("%s pod template lacks placement metadata: %v %v", name, pt.Labels, pt.Annotations)
		}
	}
	if server.Spec.SchedulerName != "gpu-scheduler" || runner.Spec.SchedulerName != "" {
		t.Errorf("schedulerName: server %q runner %q", server.Spec.SchedulerName, runner.Spec.SchedulerName)
	}
	if diff := cmp.Diff(map[string]string{"node-pool": "cpu"}, runner.Spec.NodeSelector); diff != "" {
		t.Errorf("runner nodeSelector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.Toleration{tol}, runner.Spec.Tolerations); diff != "" {
		t.Errorf("runner tolerations (-want +got):\n%s", diff)
	}
}
