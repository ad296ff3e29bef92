package controllers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"repot.dev/repot-operator/controllers/build"
)

func apiSlice(name, ns, service string, t discoveryv1.AddressType, addrs ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: service}},
		AddressType: t,
	}
	for _, a := range addrs {
		s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
	}
	return s
}

func TestEndpointSliceAddresses(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		apiSlice("kubernetes", "default", "kubernetes", discoveryv1.AddressTypeIPv4, "172.18.0.3", "172.18.0.2", "172.18.0.3"),
		apiSlice("kubernetes-v6", "default", "kubernetes", discoveryv1.AddressTypeIPv6, "fd00::3"),
		apiSlice("fqdn", "default", "kubernetes", discoveryv1.AddressTypeFQDN, "api.example.com"),
		apiSlice("other", "default", "other", discoveryv1.AddressTypeIPv4, "10.9.9.9"),
		apiSlice("kubernetes", "elsewhere", "kubernetes", discoveryv1.AddressTypeIPv4, "10.8.8.8"),
	).Build()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	a := &endpointSliceAddresses{reader: c, clock: clk}
	got, err := a.Addresses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"172.18.0.2/32", "172.18.0.3/32", "fd00::3/128"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}

	// A pass takes them into the runner's API server rule; --apiserver-cidrs
	// wins over them.
	r := &EvaluationReconciler{apiServer: a}
	if diff := cmp.Diff(want, r.planOptions(context.Background()).APIServerCIDRs); diff != "" {
		t.Errorf("plan options (-want +got):\n%s", diff)
	}
	r.opts = build.Options{APIServerCIDRs: []string{"10.96.0.1/32"}}
	if diff := cmp.Diff([]string{"10.96.0.1/32"}, r.planOptions(context.Background()).APIServerCIDRs); diff != "" {
		t.Errorf("plan options with --apiserver-cidrs (-want +got):\n%s", diff)
	}

	// Kept for a minute, then read again.
	if err := c.Delete(context.Background(), apiSlice("kubernetes-v6", "default", "kubernetes", discoveryv1.AddressTypeIPv6)); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Addresses(context.Background()); len(got) != 3 {
		t.Errorf("within the TTL: %v, want the cached 3", got)
	}
	clk.Step(2 * time.Minute)
	if got, _ := a.Addresses(context.Background()); !cmp.Equal(got, want[:2]) {
		t.Errorf("after the TTL: %v, want %v", got, want[:2])
	}
}

// TestEndpointSliceAddressesByName: a namespaced install may not list
// EndpointSlices in default, only get the kubernetes one (its Role names
// it); the addresses come from that get.
func TestEndpointSliceAddressesByName(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		apiSlice("kubernetes", "default", "kubernetes", discoveryv1.AddressTypeIPv4, "172.18.0.2"),
	).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "", errors.New("a Role names only kubernetes"))
		},
	}).Build()
	a := &endpointSliceAddresses{reader: c, clock: clocktesting.NewFakeClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))}
	got, err := a.Addresses(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"172.18.0.2/32"}, got); diff != "" {
		t.Errorf("addresses (-want +got):\n%s", diff)
	}
}

// TestEndpointSliceAddressesKeepsARefusal: where neither a list nor the
// get is allowed, the refusal is kept for the TTL (no requests, no new
// error per pass), then asked again; other errors are asked again at once.
func TestEndpointSliceAddressesKeepsARefusal(t *testing.T) {
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "discovery.k8s.io", Resource: "endpointslices"}, "", errors.New("no Role"))
	var requests int
	var fail error = forbidden
	c := fake.NewClientBuilder().WithScheme(scheme).WithInterceptorFuncs(interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
			requests++
			return fail
		},
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			requests++
			return fail
		},
	}).Build()
	clk := clocktesting.NewFakeClock(time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC))
	a := &endpointSliceAddresses{reader: c, clock: clk}
	for i := range 3 {
		if _, err := a.Addresses(context.Background()); !apierrors.IsForbidden(err) {
			t.Fatalf("pass %d: %v, want the refusal", i, err)
		}
	}
	if requests != 2 {
		t.Errorf("%d requests for 3 passes within the TTL, want 2 (one list, one get)", requests)
	}
	clk.Step(2 * time.Minute)
	fail = errors.New("connection refused")
	for range 2 {
		if _, err := a.Addresses(context.Background()); err == nil {
			t.Fatal("no error")
		}
	}
	if requests != 4 {
		t.Errorf("%d requests after the TTL and two unreachable passes, want 4 (an unreachable API server is asked again)", requests)
	}
}
