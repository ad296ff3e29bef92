package planning

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

// An edit that lands before the start (the spec is not frozen yet) is
// reconciled against every child: the children of a removed model go, and
// the runner Role and NetworkPolicy follow the new model set.
func TestPlanFollowsASpecEditedBeforeTheStart(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("a", "strong", 1).Endpoint("api", "https://x.example:8443/v1", "gpt").Shards(1).Obj()
	w := newWorld()
	step(e, w, t0)
	step(e, w, t0)
	if w.deployment(build.ServerName("ev", "a")) == nil || len(w.Roles) != 1 || len(w.NetworkPolicies) != 2 {
		t.Fatalf("the first passes made no server of a, Role or NetworkPolicies (runners' and servers')")
	}
	// Nothing has an annotation-less update pending once the world settled.
	if p := PlanEvaluation(e, w, testOpts); len(p.Update) != 0 {
		t.Fatalf("a settled world plans updates %v", digest(p).Update)
	}

	e.Spec.Models = e.Spec.Models[1:]
	e.Spec.Models[0].Endpoint.URL = "https://y.example:9443/v1"
	p := PlanEvaluation(e, w, testOpts)
	d := digest(p)
	for _, want := range []string{"Deployment/" + build.ServerName("ev", "a"), "Service/" + build.ServerName("ev", "a")} {
		if !slices.Contains(d.Delete, want) {
			t.Errorf("deletes %v, want %s among them", d.Delete, want)
		}
	}
	var role *rbacv1.Role
	var np *networkingv1.NetworkPolicy
	for _, o := range p.Update {
		switch u := o.(type) {
		case *rbacv1.Role:
			role = u
		case *networkingv1.NetworkPolicy:
			if u.Name == build.RunnerAccessName(e.Name) {
				np = u
			}
		}
	}
	if role == nil {
		t.Fatalf("updates %v: want the Role", d.Update)
	}
	if diff := cmp.Diff([]string{build.LedgerName("ev", "api", 0)}, role.Rules[0].ResourceNames); diff != "" {
		t.Errorf("Role's ledgers (-want +got):\n%s", diff)
	}
	if np == nil {
		t.Fatalf("updates %v: want the NetworkPolicy", d.Update)
	}
	if diff := cmp.Diff(build.RunnerNetworkPolicy(e, testOpts.WithDefaults()).Spec, np.Spec); diff != "" {
		t.Errorf("NetworkPolicy spec (-want +got):\n%s", diff)
	}

	// Applied, the next pass changes nothing more of them.
	applyToWorld(e, w, p)
	again := PlanEvaluation(e, w, testOpts)
	if len(again.Update) != 0 || len(again.Delete) != 0 {
		t.Errorf("the next pass updates %v and deletes %v", digest(again).Update, digest(again).Delete)
	}
}
