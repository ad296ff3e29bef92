package planning

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

func cond(t string, s metav1.ConditionStatus, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: s, Reason: "R", Message: msg}
}
