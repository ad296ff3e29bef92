package controllers

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/planning"
)

// A child the API server rejects ends the pass, but its siblings of the
// same pass are still written: the Service of a model whose Deployment is
// rejected exists, whichever of the two is sent first and however slow.
func TestRejectedChildLeavesItsSiblingsWritten(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	deploymentRejected := make(chan struct{})
	c := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			switch obj.(type) {
			case *appsv1.Deployment:
				defer close(deploymentRejected)
				return apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, obj.GetName(),
					field.ErrorList{field.Invalid(field.NewPath("spec", "template", "spec", "nodeSelector"), "not a label key!", "bad key")})
			case *corev1.Service:
				// The Service's request is on the wire when the
				// Deployment's rejection comes back.
				select {
				case <-deploymentRejected:
				case <-time.After(5 * time.Second):
				}
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			return c.Create(ctx, obj, opts...)
		},
	}).Build()
	opts := testOpts
	opts.Clock = clocktesting.NewFakePassiveClock(t0)
	r := &EvaluationReconciler{
		client: c, apiReader: c, recorder: events.NewFakeRecorder(10), opts: opts.WithDefaults(),
		ledgers: planning.NewRecordCache(), pending: newPendingWrites(), metrics: newEvaluationMetrics(),
	}
	e := revtesting.MakeEvaluation("ev", "ns").Simulated("m", "strong", 1).Obj()
	e.UID = "uid-ev"
	p := &planning.Plan{Create: []planning.Object{
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "ev-m", Namespace: "ns"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "ev-m", Namespace: "ns"}},
	}}

	_, _, err = r.applyChildren(context.Background(), e, p)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("applyChildren error = %v, want the Deployment's rejection", err)
	}
	var svc corev1.Service
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "ev-m"}, &svc); err != nil {
		t.Errorf("the Service of the pass that the Deployment's rejection ended: %v", err)
	}
}
