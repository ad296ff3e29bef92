package planning

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// An evaluation in flight across the child-name change of commit 14e2875
// (docs/operations.md, "Upgrading across the child-name change"): its
// children under the names without the pair hash are not adopted. The
// server and the runner Job under the old names go and new ones follow,
// and the ledgers under the old names stay and their records still count,
// so nothing recorded is lost (the runs are made again in the new ledgers).
func TestChildrenUnderPreHashNames(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Shards(1).Obj()
	w := newWorld()
	runToRunning(e, w)
	if w.job(build.RunnerJobName("ev", "m")) == nil {
		t.Fatal("no runner Job")
	}
	// What an operator before the hash created: <evaluation>-<model>-<role>.
	oldName := func(n string) string { return strings.Replace(n, build.ModelBase("ev", "m"), "ev-m", 1) }
	for i := range w.Deployments {
		w.Deployments[i].Name = oldName(w.Deployments[i].Name)
	}
	for i := range w.Services {
		w.Services[i].Name = oldName(w.Services[i].Name)
	}
	for i := range w.Jobs {
		w.Jobs[i].Name = oldName(w.Jobs[i].Name)
	}
	for i := range w.Ledgers {
		w.Ledgers[i].Name = oldName(w.Ledgers[i].Name)
	}
	w.Ledgers[0].Data = map[string]string{contract.LedgerRecordsKey: recordLine(t, contract.Record{Model: "m", ProblemID: "p1", Method: "pot", Success: true})}
	w.Records, _ = ReadLedgers(w.Ledgers)

	p := step(e, w, t0)
	var deleted, created []string
	for _, o := range p.Delete {
		deleted = append(deleted, kindName(o))
	}
	for _, o := range p.Create {
		created = append(created, kindName(o))
	}
	slices.Sort(deleted)
	wantDeleted := []string{"Deployment/ev-m-server", "Job/ev-m-run", "Service/ev-m-server"}
	if diff := cmp.Diff(wantDeleted, deleted); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if !slices.Contains(created, "Deployment/"+build.ServerName("ev", "m")) {
		t.Errorf("created %v, want the server under its new name", created)
	}
	if !hasNamed(w.Ledgers, "ev-m-ledger-0") {
		t.Error("the ledger under the old name is gone")
	}
	if got := p.Status.Models[0].RunsDone; got != 1 {
		t.Errorf("runsDone %d, want the old ledger's record counted (1)", got)
	}
}
