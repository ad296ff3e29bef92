package planning

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// A child whose name an object of another owner holds is not counted as
// created, and the status says Stalled, ChildNameTaken, naming the object
// and its owner.
func TestPlanNameTaken(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	e.UID = "new"
	w := newWorld()
	first := PlanEvaluation(e, w, testOpts)
	server := build.ServerName("ev", "m")
	var svc Object
	for _, o := range first.Create {
		if objectKind(o) == "Service" && o.GetName() == server {
			svc = o
		}
	}
	if svc == nil {
		t.Fatalf("the first pass creates no Service %s: %v", server, digest(first).Create)
	}
	existing := svc.DeepCopyObject().(Object)
	existing.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: repotv1.GroupVersion.String(), Kind: "RepotEvaluation", Name: "ev", UID: "old", Controller: ptrTrue()}})
	if OwnedBy(e, existing) {
		t.Fatalf("an object controlled by uid old counts as owned by uid new")
	}
	w.NameTaken = []TakenName{NewTakenName(svc, existing)}
	p := PlanEvaluation(e, w, testOpts)

	for _, c := range digest(p).Create {
		if c == "Service/"+server {
			t.Errorf("the plan still creates the taken %s", c)
		}
	}
	st := findCondition(p.Status.Conditions, repotv1.ConditionStalled)
	if st == nil || st.Status != metav1.ConditionTrue || st.Reason != repotv1.ReasonChildNameTaken {
		t.Fatalf("Stalled = %+v, want True/ChildNameTaken", st)
	}
	for _, want := range []string{"Service " + server, "RepotEvaluation ev (uid old)"} {
		if !strings.Contains(st.Message, want) {
			t.Errorf("Stalled message %q lacks %q", st.Message, want)
		}
	}
	if p.RequeueAfter == 0 || p.RequeueAfter > nameTakenRecheck {
		t.Errorf("RequeueAfter = %v, want at most %v", p.RequeueAfter, nameTakenRecheck)
	}
	if diff := cmp.Diff([]string{"ChildNameTaken"}, digest(p).Events); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func ptrTrue() *bool { b := true; return &b }
