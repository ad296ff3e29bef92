package controllers

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/planning"
)

// The cache keeps the data of the ConfigMaps it reads, the unsealed
// ledgers an evaluation controls, and drops every other ConfigMap's (the
// managed-by label that selects them anyone may set); it strips every
// object's managedFields.
func TestDropConfigMapData(t *testing.T) {
	managed := []metav1.ManagedFieldsEntry{{Manager: "repot", Operation: metav1.ManagedFieldsOperationUpdate}}
	data := map[string]string{contract.LedgerRecordsKey: `{"model":"m"}` + "\n"}
	e := revtesting.MakeEvaluation("ev", "ns").Obj()
	e.UID = "uid-ev"
	byEvaluation := []metav1.OwnerReference{*metav1.NewControllerRef(e, repotv1.GroupVersion.WithKind("RepotEvaluation"))}
	notController := []metav1.OwnerReference{byEvaluation[0]}
	notController[0].Controller = nil
	otherGroup := []metav1.OwnerReference{byEvaluation[0]}
	otherGroup[0].APIVersion = "example.com/v1alpha1"
	type cmOpt func(*corev1.ConfigMap)
	sealed := func(c *corev1.ConfigMap) {
		c.Annotations = map[string]string{build.AnnotationSealed: build.SealedValue}
	}
	owners := func(refs []metav1.OwnerReference) cmOpt {
		return func(c *corev1.ConfigMap) { c.OwnerReferences = refs }
	}
	cm := func(component string, opts ...cmOpt) *corev1.ConfigMap {
		c := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", ManagedFields: managed,
				Labels: map[string]string{build.LabelComponent: component, build.LabelManagedBy: build.ManagerName}},
			Data: data, BinaryData: map[string][]byte{"b": []byte("b")},
		}
		for _, o := range opts {
			o(c)
		}
		return c
	}
	for _, tc := range []struct {
		name     string
		in       *corev1.ConfigMap
		keepData bool
	}{
		{"an evaluation's ledger keeps its data", cm(build.ComponentLedger, owners(byEvaluation)), true},
		{"an evaluation's sealed ledger loses its data", cm(build.ComponentLedger, owners(byEvaluation), sealed), false},
		{"a labelled ledger no evaluation owns loses its data", cm(build.ComponentLedger), false},
		{"a ledger an evaluation owns but does not control loses its data", cm(build.ComponentLedger, owners(notController)), false},
		{"a ledger controlled by a kind of another group loses its data", cm(build.ComponentLedger, owners(otherGroup)), false},
		{"another ConfigMap an evaluation controls loses its data", cm("problems", owners(byEvaluation)), false},
		{"another labelled ConfigMap loses its data", cm("problems"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := DropConfigMapData(tc.in.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			got := out.(*corev1.ConfigMap)
			if got.ManagedFields != nil {
				t.Errorf("managedFields kept: %v", got.ManagedFields)
			}
			if diff := cmp.Diff(tc.in.Labels, got.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.in.Annotations, got.Annotations); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.in.OwnerReferences, got.OwnerReferences); diff != "" {
				t.Errorf("owner references (-want +got):\n%s", diff)
			}
			if keep := got.Data != nil && got.BinaryData != nil; keep != tc.keepData {
				t.Errorf("data kept = %t, want %t", keep, tc.keepData)
			}
			if !tc.keepData && (got.Data != nil || got.BinaryData != nil) {
				t.Errorf("some data kept: %v %v", got.Data, got.BinaryData)
			}
		})
	}
	// Other kinds: managedFields stripped, the rest as it was.
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ManagedFields: managed}}
	out, err := DropConfigMapData(pod)
	if err != nil || out.(*corev1.Pod).ManagedFields != nil || out.(*corev1.Pod).Name != "p" {
		t.Errorf("pod: %v, %v", out, err)
	}
	// The manager's ConfigMap informer uses it.
	for obj, by := range CacheOptions("", false).ByObject {
		if _, ok := obj.(*corev1.ConfigMap); ok {
			if by.Transform == nil {
				t.Fatal("the ConfigMap cache has no transform")
			}
			if out, _ := by.Transform(cm(build.ComponentLedger)); out.(*corev1.ConfigMap).Data != nil {
				t.Error("the ConfigMap cache keeps an unowned ConfigMap's data")
			}
			if out, _ := by.Transform(cm(build.ComponentLedger, owners(byEvaluation), sealed)); out.(*corev1.ConfigMap).Data != nil {
				t.Error("the ConfigMap cache keeps a sealed ledger's data")
			}
		}
	}
}

// A sealed evaluation's snapshot reads its ledgers from the API server (the
// cache holds no data of them), parses them for the pass, and keeps nothing
// of them in the record cache; an unsealed one reads them from the cache
// and keeps their parsed records.
func TestSnapshotReadsSealedLedgersUncached(t *testing.T) {
	for _, sealed := range []bool{true, false} {
		e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Shards(2).Obj()
		e.UID = "uid-ev"
		var stored, cached []client.Object
		for i, cm := range build.LedgerConfigMaps(e, &e.Spec.Models[0]) {
			r := contract.Record{Model: "m", ProblemID: "p" + string(rune('1'+i)), Method: "pot", Success: true, Calls: 1}
			line, _ := json.Marshal(r)
			cm.Data = map[string]string{contract.LedgerRecordsKey: string(line) + "\n"}
			if sealed {
				cm.Annotations = map[string]string{build.AnnotationSealed: build.SealedValue}
			}
			stored = append(stored, cm.DeepCopy())
			c, _ := DropConfigMapData(cm.DeepCopy())
			cached = append(cached, c.(client.Object))
		}
		var log callLog
		r := newFakeReconciler(t, &log, nil, append([]client.Object{e}, cached...)...)
		s, err := NewScheme()
		if err != nil {
			t.Fatal(err)
		}
		r.apiReader = fake.NewClientBuilder().WithScheme(s).WithObjects(stored...).Build()

		w, err := r.snapshot(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, rec := range w.Records {
			got = append(got, rec.ProblemID)
		}
		if diff := cmp.Diff([]string{"p1", "p2"}, got); diff != "" {
			t.Errorf("sealed=%t: records (-want +got):\n%s", sealed, diff)
		}
		if w.Results == nil || w.Results.RunsDone["m"] != 2 {
			t.Errorf("sealed=%t: results %+v", sealed, w.Results)
		}
		for _, cm := range w.Ledgers {
			if !strings.Contains(cm.Data[contract.LedgerRecordsKey], `"model":"m"`) {
				t.Errorf("sealed=%t: ledger %s in the world without its records", sealed, cm.Name)
			}
		}
		kept := r.ledgers.RecordsOf(planning.NamespacedName(e))(build.LedgerName("ev", "m", 0))
		if sealed && kept != nil {
			t.Errorf("the records of a sealed ledger stay in the record cache: %v", kept)
		}
		if !sealed && kept == nil {
			t.Error("the records of an unsealed ledger are not kept")
		}
	}
}
