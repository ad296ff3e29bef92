package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
	"repot.dev/repot-operator/controllers/planning"
)

// callLog records the writes a reconcile makes, in order.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

// newFakeReconciler is a reconciler on a fake client holding objs, whose
// status patches fail with patchErr when it is set.
func newFakeReconciler(t *testing.T, log *callLog, patchErr error, objs ...client.Object) *EvaluationReconciler {
	t.Helper()
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	b := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&repotv1.RepotEvaluation{})
	for _, k := range planning.ChildObjects() {
		b = b.WithIndex(k, build.OwnerKey, func(o client.Object) []string {
			if uid := build.ControllerUID(o); uid != "" {
				return []string{uid}
			}
			return nil
		})
	}
	b = b.WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			log.add(fmt.Sprintf("create %T", obj))
			return c.Create(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
			if e, ok := obj.(*repotv1.RepotEvaluation); ok && e.Status.StartTime != nil {
				log.add("status startTime")
			} else {
				log.add("status")
			}
			if patchErr != nil {
				return patchErr
			}
			return c.SubResource(sub).Patch(ctx, obj, p, opts...)
		},
	})
	c := b.Build()
	opts := testOpts
	opts.Clock = clocktesting.NewFakePassiveClock(t0)
	return &EvaluationReconciler{
		client: c, apiReader: c, recorder: events.NewFakeRecorder(100), opts: opts.WithDefaults(),
		ledgers: planning.NewRecordCache(), pending: newPendingWrites(), metrics: newEvaluationMetrics(),
	}
}

// The spec freezes with the first child: the pass that creates the first
// children writes status.startTime before any of them.
func TestStartTimeIsWrittenBeforeTheFirstChild(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	e.UID = "uid-ev"
	var log callLog
	r := newFakeReconciler(t, &log, nil, e)
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "ev"}}); err != nil {
		t.Fatal(err)
	}
	if len(log.calls) < 2 || log.calls[0] != "status startTime" {
		t.Fatalf("writes %v: want the start time first, then the children", log.calls)
	}
	var got repotv1.RepotEvaluation
	if err := r.client.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "ev"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.Status.StartTime == nil || !got.Status.StartTime.Time.Equal(metav1.NewTime(t0).Time) {
		t.Errorf("stored startTime = %v, want %v", got.Status.StartTime, t0)
	}
}

// If the start cannot be recorded, nothing is created and the pass fails
// (and is retried).
func TestNoChildWhenTheStartCannotBeRecorded(t *testing.T) {
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	e.UID = "uid-ev"
	var log callLog
	r := newFakeReconciler(t, &log, errors.New("the API server is away"), e)
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "ev"}})
	if err == nil {
		t.Fatalf("the pass succeeded without recording the start")
	}
	for _, c := range log.calls {
		if c != "status startTime" {
			t.Errorf("writes %v: want no creation once the start could not be recorded", log.calls)
			break
		}
	}
}
