package planning

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/kueueadapter"
)

// held is an object of kind and name like child, controlled by the
// RepotEvaluation ev of uid old (an earlier evaluation of the same name).
func held(child Object) Object {
	existing := child.DeepCopyObject().(Object)
	existing.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: repotv1.GroupVersion.String(), Kind: "RepotEvaluation", Name: "ev", UID: "old", Controller: ptrTrue()}})
	return existing
}

// created is the object of kind and name among a plan's creations, or nil.
func created(p Plan, kind, name string) Object {
	for _, o := range p.Create {
		if objectKind(o) == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

// A child (or Workload) whose name an object of another owner holds is not
// counted as created, and the evaluation shows a whole blocked state, as
// for its other obstacles: Reconciling False and Stalled True with reason
// ChildNameTaken naming the object and its owner, the state Stalled and a
// Warning event; the plan looks again soon. A start recorded for a server
// that could not be created is undone while nothing ran.
func TestPlanNameTaken(t *testing.T) {
	server := build.ServerName("ev", "m")
	blocked := conds("False/ServersStarting", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "False/ChildNameTaken", "True/ChildNameTaken")
	cases := []struct {
		name string
		eval *repotv1.RepotEvaluation
		// taken runs the passes before the one that finds a name taken,
		// and returns what is in the way.
		taken   func(e *repotv1.RepotEvaluation, w *World) []TakenName
		want    planDigest
		message []string
	}{{
		name: "the server's Service of an earlier evaluation of the same name",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		taken: func(e *repotv1.RepotEvaluation, w *World) []TakenName {
			svc := created(PlanEvaluation(e, w, testOpts), "Service", server)
			return []TakenName{NewTakenName(svc, held(svc))}
		},
		want: planDigest{
			Create:     cat(accessCreates, serverPolicy, []string{"Deployment/" + server}),
			State:      repotv1.StateStalled,
			Conditions: blocked, Servers: []string{"m=Starting"}, Started: true,
			RequeueAfter: nameTakenRecheck, Events: []string{"ChildNameTaken"},
		},
		message: []string{"Service " + server, "RepotEvaluation ev (uid old)"},
	}, {
		name: "the server's Deployment, with the start recorded for it: the start is undone",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj(),
		taken: func(e *repotv1.RepotEvaluation, w *World) []TakenName {
			p := PlanEvaluation(e, w, testOpts)
			// The shell records the start before the first server.
			e.Status.StartTime = p.Status.StartTime
			d := created(p, "Deployment", server)
			return []TakenName{NewTakenName(d, held(d))}
		},
		want: planDigest{
			Create:     cat(accessCreates, serverPolicy, []string{"Service/" + server}),
			State:      repotv1.StateStalled,
			Conditions: blocked, Servers: []string{"m=Pending"},
			RequeueAfter: nameTakenRecheck, Events: []string{"ChildNameTaken"},
		},
		message: []string{"Deployment " + server, "RepotEvaluation ev (uid old)"},
	}, {
		name: "a queued model's Workload held by an earlier evaluation: reported, not waited on silently",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Label(kueueadapter.QueueNameLabel, "gpus").Obj(),
		taken: func(e *repotv1.RepotEvaluation, w *World) []TakenName {
			w.Admitted = AdmittedModels(e, w)
			p := step(e, w, t0)
			if len(p.Queue) != 1 {
				t.Fatalf("the first pass submits %v", ops(p))
			}
			wl := p.Queue[0].Workload
			return []TakenName{NewTakenName(wl, held(wl))}
		},
		want: planDigest{
			Create:     []string{"RoleBinding/ev-runner"},
			State:      repotv1.StateStalled,
			Conditions: conds("False/ModelsQueued", "False/WaitingForServers", "False/InProgress", "False/InProgress", "False/InProgress", "False/ChildNameTaken", "True/ChildNameTaken"),
			Servers:    []string{"m=Pending"}, RequeueAfter: nameTakenRecheck, Events: []string{"ChildNameTaken"},
		},
		message: []string{"Workload " + kueueadapter.WorkloadName("ev", "m"), "RepotEvaluation ev (uid old)"},
	}, {
		name: "a started evaluation stays started",
		eval: revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Simulated("m2", "weak", 1).Obj(),
		taken: func(e *repotv1.RepotEvaluation, w *World) []TakenName {
			p := PlanEvaluation(e, w, testOpts)
			e.Status.StartTime = p.Status.StartTime
			d := created(p, "Deployment", build.ServerName("ev", "m2"))
			p.Create = withoutTaken(p.Create, []TakenName{NewTakenName(d, held(d))})
			applyToWorld(e, w, p)
			w.Now = t0.Add(time.Minute)
			return []TakenName{NewTakenName(d, held(d))}
		},
		want: planDigest{
			Create:     []string{"RoleBinding/ev-runner"},
			State:      repotv1.StateStalled,
			Conditions: blocked, Servers: []string{"m=Starting", "m2=Pending"}, Started: true,
			RequeueAfter: nameTakenRecheck, Events: []string{"ChildNameTaken"},
		},
		message: []string{"Deployment " + build.ServerName("ev", "m2")},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, w := tc.eval, newWorld()
			e.UID = "new"
			taken := tc.taken(e, w)
			if OwnedBy(e, held(&metav1.PartialObjectMetadata{})) {
				t.Fatalf("an object controlled by uid old counts as owned by uid new")
			}
			p := planApplied(e, w, Applied{NameTaken: taken})
			if diff := cmp.Diff(tc.want, digest(p)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			for _, typ := range []string{repotv1.ConditionStalled, repotv1.ConditionReconciling} {
				c := findCondition(p.Status.Conditions, typ)
				for _, want := range tc.message {
					if !strings.Contains(c.Message, want) {
						t.Errorf("%s message %q lacks %q", typ, c.Message, want)
					}
				}
			}
			if len(p.Events) > 0 && !p.Events[0].Warning {
				t.Errorf("the ChildNameTaken event is not a Warning")
			}
		})
	}
}

func ptrTrue() *bool { b := true; return &b }
