package controllers

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
)

// A runner of evaluation a moves its ledger to evaluation b (owner
// reference and labels) with runs of b's model: b's snapshot neither reads
// it nor counts its runs, and keeps it apart as a stray.
func TestSnapshotReadsOnlyExpectedLedgers(t *testing.T) {
	a := revtesting.MakeEvaluation("a", "ns").Simulated("m", "strong", 1).Shards(1).Obj()
	b := revtesting.MakeEvaluation("b", "ns").Simulated("m", "strong", 1).Shards(1).Obj()
	a.UID, b.UID = "uid-a", "uid-b"
	line := func(problem string) string {
		l, _ := json.Marshal(contract.Record{Model: "m", ProblemID: problem, Method: "pot", Success: true, Calls: 1})
		return string(l) + "\n"
	}
	own := build.LedgerConfigMaps(b, &b.Spec.Models[0])[0]
	own.Data[contract.LedgerRecordsKey] = line("p1")
	moved := build.LedgerConfigMaps(a, &a.Spec.Models[0])[0]
	moved.Data[contract.LedgerRecordsKey] = line("p2") + line("p3")
	moved.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(b, repotv1.GroupVersion.WithKind("RepotEvaluation"))}
	moved.Labels = own.Labels

	var log callLog
	r := newFakeReconciler(t, &log, nil, b, own, moved)
	w, err := r.snapshot(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	var ledgers, strays, problems []string
	for _, cm := range w.Ledgers {
		ledgers = append(ledgers, cm.Name)
	}
	for _, cm := range w.StrayLedgers {
		strays = append(strays, cm.Name)
	}
	for _, rec := range w.Records {
		problems = append(problems, rec.ProblemID)
	}
	if diff := cmp.Diff([]string{own.Name}, ledgers); diff != "" {
		t.Errorf("ledgers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{moved.Name}, strays); diff != "" {
		t.Errorf("strays (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"p1"}, problems); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if got := w.Results.RunsDone["m"]; got != 1 {
		t.Errorf("runs done = %d, want 1", got)
	}
}
