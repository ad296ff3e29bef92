package build

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// spec.placement passes priority, image pull secrets, labels, annotations
// and node placement to every child. The operator's own labels always win
// (the API refuses repot.dev/ keys and app.kubernetes.io/managed-by, and
// they are written last here).

// placeMeta adds spec.placement's labels and annotations to a child's or a
// pod template's metadata.
func placeMeta(e *repotv1.RepotEvaluation, meta *metav1.ObjectMeta) {
	pl := e.Spec.Placement
	if pl == nil {
		return
	}
	if len(pl.Labels) > 0 {
		own := meta.Labels
		meta.Labels = make(map[string]string, len(pl.Labels)+len(own))
		for _, l := range pl.Labels {
			meta.Labels[l.Key] = l.Value
		}
		for k, v := range own {
			meta.Labels[k] = v
		}
	}
	if len(pl.Annotations) > 0 {
		if meta.Annotations == nil {
			meta.Annotations = make(map[string]string, len(pl.Annotations))
		}
		for _, a := range pl.Annotations {
			if _, own := meta.Annotations[a.Key]; !own {
				meta.Annotations[a.Key] = a.Value
			}
		}
	}
}

// placePod sets what every pod of the evaluation carries: metadata,
// priority class and image pull secrets.
func placePod(e *repotv1.RepotEvaluation, t *corev1.PodTemplateSpec) {
	pl := e.Spec.Placement
	if pl == nil {
		return
	}
	placeMeta(e, &t.ObjectMeta)
	t.Spec.PriorityClassName = pl.PriorityClassName
	for _, s := range pl.ImagePullSecrets {
		t.Spec.ImagePullSecrets = append(t.Spec.ImagePullSecrets, corev1.LocalObjectReference{Name: s.Name})
	}
}

// placeServerPod places a model server's pod: placePod and the scheduler.
func placeServerPod(e *repotv1.RepotEvaluation, t *corev1.PodTemplateSpec) {
	placePod(e, t)
	if pl := e.Spec.Placement; pl != nil && pl.Server != nil {
		t.Spec.SchedulerName = pl.Server.SchedulerName
	}
}

// placeRunnerPod places a runner pod: placePod, node selector and
// tolerations.
func placeRunnerPod(e *repotv1.RepotEvaluation, t *corev1.PodTemplateSpec) {
	placePod(e, t)
	pl := e.Spec.Placement
	if pl == nil || pl.Runner == nil {
		return
	}
	if len(pl.Runner.NodeSelector) > 0 {
		t.Spec.NodeSelector = make(map[string]string, len(pl.Runner.NodeSelector))
		for _, l := range pl.Runner.NodeSelector {
			t.Spec.NodeSelector[l.Key] = l.Value
		}
	}
	t.Spec.Tolerations = append(t.Spec.Tolerations, pl.Runner.Tolerations...)
}
