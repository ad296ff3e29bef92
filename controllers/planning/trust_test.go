package planning

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// ledgerOf is the ledger the operator builds for (e, model, shard), with
// records, as its runner's sidecar leaves it.
func ledgerOf(t *testing.T, e *repotv1.RepotEvaluation, model string, shard int, recs ...contract.Record) corev1.ConfigMap {
	t.Helper()
	for i := range e.Spec.Models {
		if e.Spec.Models[i].Name != model {
			continue
		}
		for _, cm := range build.LedgerConfigMaps(e, &e.Spec.Models[i]) {
			if cm.Name != build.LedgerName(e.Name, model, shard) {
				continue
			}
			text := ""
			for _, r := range recs {
				text += recordLine(t, r) + "\n"
			}
			cm.Data[contract.LedgerRecordsKey] = text
			cm.ResourceVersion = "1"
			return *cm
		}
	}
	t.Fatalf("no ledger %s/%s/%d", e.Name, model, shard)
	return corev1.ConfigMap{}
}

// A runner may patch its ledgers' metadata: move the owner reference to
// another evaluation, relabel them. An evaluation reads only the ledgers
// whose names it builds, with the labels those names imply, and of each
// ledger only the records of its model.
func TestExpectedLedgers(t *testing.T) {
	a := revtesting.MakeEvaluation("a", "ns").Simulated("m", "strong", 1).Shards(2).Obj()
	b := revtesting.MakeEvaluation("b", "ns").Simulated("m", "strong", 1).Simulated("n", "strong", 1).Shards(1).Obj()
	a.UID, b.UID = "uid-a", "uid-b"
	run := func(model, problem string) contract.Record {
		return contract.Record{Model: model, ProblemID: problem, Method: "pot", Success: true, Calls: 1}
	}

	// a's ledger, moved to b (owner reference and labels), with runs of
	// b's models.
	moved := ledgerOf(t, a, "m", 1, run("m", "p1"), run("n", "p1"))
	moved.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(b, repotv1.GroupVersion.WithKind("RepotEvaluation"))}
	moved.Labels = build.ChildLabels("b", "n", build.ComponentLedger)
	moved.Labels[build.LabelShard] = "0"
	// b's own ledger of n, relabelled as m's, with a run of m among n's.
	relabelled := ledgerOf(t, b, "n", 0, run("n", "p2"), run("m", "p2"))
	relabelled.Labels[build.LabelModel] = "m"
	own := ledgerOf(t, b, "m", 0, run("m", "p3"))

	for _, tc := range []struct {
		name        string
		in          []corev1.ConfigMap
		wantLedgers []string
		wantModels  []string // the model label of each expected ledger
		wantStrays  []string
		wantRuns    map[string]int
	}{
		{
			name:        "a moved ledger is a stray, and its records are not b's",
			in:          []corev1.ConfigMap{own, moved},
			wantLedgers: []string{own.Name}, wantModels: []string{"m"},
			wantStrays: []string{moved.Name},
			wantRuns:   map[string]int{"m": 1},
		},
		{
			name:        "a relabelled ledger keeps the model of its name, and records of another model are dropped",
			in:          []corev1.ConfigMap{relabelled, own},
			wantLedgers: []string{relabelled.Name, own.Name}, wantModels: []string{"n", "m"},
			wantRuns: map[string]int{"m": 1, "n": 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inLabels := make([]map[string]string, len(tc.in))
			for i := range tc.in {
				inLabels[i] = tc.in[i].Labels
			}
			got, strays := ExpectedLedgers(b, tc.in)
			var names, models, strayNames []string
			for _, cm := range got {
				names, models = append(names, cm.Name), append(models, cm.Labels[build.LabelModel])
			}
			for _, cm := range strays {
				strayNames = append(strayNames, cm.Name)
			}
			if diff := cmp.Diff(tc.wantLedgers, names); diff != "" {
				t.Errorf("expected ledgers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantModels, models); diff != "" {
				t.Errorf("their model labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStrays, strayNames); diff != "" {
				t.Errorf("strays (-want +got):\n%s", diff)
			}
			for i := range tc.in {
				if diff := cmp.Diff(inLabels[i], tc.in[i].Labels); diff != "" {
					t.Errorf("the input's labels changed (-want +got):\n%s", diff)
				}
			}
			recs, _ := ReadLedgers(got)
			res := ComputeResults(b, recs)
			if diff := cmp.Diff(tc.wantRuns, res.RunsDone); diff != "" {
				t.Errorf("runs done (-want +got):\n%s", diff)
			}
		})
	}
}

// A stray ledger (controlled by the evaluation under a name it does not
// build) is deleted, like a removed model's.
func TestStrayLedgersAreDeleted(t *testing.T) {
	a := revtesting.MakeEvaluation("a", "ns").Simulated("m", "strong", 1).Shards(1).Obj()
	b := revtesting.MakeEvaluation("b", "ns").Simulated("m", "strong", 1).Shards(1).Obj()
	w := newWorld()
	w.Ledgers, w.StrayLedgers = ExpectedLedgers(b, []corev1.ConfigMap{ledgerOf(t, b, "m", 0), ledgerOf(t, a, "m", 0)})
	var p Plan
	p.deleteRemovedModels(b, w)
	var deleted []string
	for _, o := range p.Delete {
		deleted = append(deleted, kindName(o))
	}
	if diff := cmp.Diff([]string{"ConfigMap/" + build.LedgerName("a", "m", 0)}, deleted); diff != "" {
		t.Errorf("deletes (-want +got):\n%s", diff)
	}
}
