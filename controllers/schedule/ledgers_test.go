package schedule

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// TestRunRecordsReadsOnlyExpectedLedgers: a regression comparison reads a
// run's records only from the ledgers the operator built for it. A ledger
// of another evaluation whose owner reference and labels a runner moved
// under the run, and a ledger the run does not control, are not read.
func TestRunRecordsReadsOnlyExpectedLedgers(t *testing.T) {
	run := revtesting.MakeEvaluation("nightly-1", "ns").Simulated("sim", "strong", 1).Obj()
	run.UID = types.UID("run-uid")
	other := revtesting.MakeEvaluation("other", "ns").Simulated("sim", "strong", 1).Obj()
	other.UID = types.UID("other-uid")
	line := func(problem string) string {
		return `{"model":"sim","problem_id":"` + problem + `","method":"pot","success":true,"stopped_reason":"goal","route":"initial_pot_success","calls":1}` + "\n"
	}
	own := *build.LedgerConfigMaps(run, &run.Spec.Models[0])[0]
	own.Data[contract.LedgerRecordsKey] = line("p1") + "not json\n"
	// A ledger of another evaluation, moved under the run: its owner
	// reference and labels now say it is the run's.
	moved := *build.LedgerConfigMaps(other, &other.Spec.Models[0])[0]
	moved.OwnerReferences, moved.Labels = own.OwnerReferences, own.Labels
	moved.Data = map[string]string{contract.LedgerRecordsKey: line("forged")}
	// The run's name, but controlled by another evaluation.
	foreign := *build.LedgerConfigMaps(run, &run.Spec.Models[0])[1]
	foreign.OwnerReferences = moved.DeepCopy().OwnerReferences
	foreign.OwnerReferences[0].UID = other.UID
	foreign.Data = map[string]string{contract.LedgerRecordsKey: line("foreign")}

	var skipped []string
	recs := runRecords(run, []corev1.ConfigMap{own, moved, foreign}, func(ledger string, _ int, _ error) { skipped = append(skipped, ledger) })
	var got []string
	for _, r := range recs {
		got = append(got, r.ProblemID)
	}
	if diff := cmp.Diff([]string{"p1"}, got); diff != "" {
		t.Errorf("records read (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{own.Name}, skipped); diff != "" {
		t.Errorf("unreadable lines reported (-want +got):\n%s", diff)
	}
}
