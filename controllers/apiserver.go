package controllers

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch

// APIServerAddresses names the addresses at which pods reach the API server,
// as single-address CIDRs (/32, /128), for the runner NetworkPolicy's API
// server rule when --apiserver-cidrs is not given. None means they cannot
// be named: the policy then has no API server rule (it fails closed).
type APIServerAddresses interface {
	Addresses(ctx context.Context) ([]string, error)
}

// apiServerNamespace and apiServerService are where the API server publishes
// its own endpoints: the "kubernetes" Service in "default", whose
// EndpointSlices the API server itself keeps.
const (
	apiServerNamespace = "default"
	apiServerService   = "kubernetes"
	// apiServerAddressesTTL is how long a read of the EndpointSlices
	// serves: the API server's addresses change rarely, and reading them on
	// every reconcile would put a request on each.
	apiServerAddressesTTL = time.Minute
)

// endpointSliceAddresses reads the kubernetes Service's EndpointSlices in
// default, through a reader that needs no cache over that namespace (the
// manager's API reader: with --namespace the cache does not cover default),
// and keeps the answer for apiServerAddressesTTL. A refusal (no RBAC to
// read them) is kept as long: it lasts until someone changes the RBAC, and
// asking again on every pass would cost two requests and an error log
// each. Other errors are not kept.
type endpointSliceAddresses struct {
	reader client.Reader
	clock  clock.PassiveClock

	mu        sync.Mutex
	cached    []string
	cachedErr error
	at        time.Time
}

func (a *endpointSliceAddresses) Addresses(ctx context.Context) ([]string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.at.IsZero() && a.clock.Since(a.at) < apiServerAddressesTTL {
		return a.cached, a.cachedErr
	}
	// List the Service's slices (a cluster-wide install may); where that is
	// forbidden, get the one the API server keeps under the Service's
	// name, which is what a namespaced install's Role in default allows.
	var l discoveryv1.EndpointSliceList
	if err := a.reader.List(ctx, &l, client.InNamespace(apiServerNamespace),
		client.MatchingLabels{discoveryv1.LabelServiceName: apiServerService}); err != nil {
		if !apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("reading the API server's EndpointSlices: %w", err)
		}
		var one discoveryv1.EndpointSlice
		if gerr := a.reader.Get(ctx, client.ObjectKey{Namespace: apiServerNamespace, Name: apiServerService}, &one); gerr != nil {
			err = fmt.Errorf("reading the API server's EndpointSlice %s/%s: %w (listing them: %w)", apiServerNamespace, apiServerService, gerr, err)
			if apierrors.IsForbidden(gerr) {
				a.cached, a.cachedErr, a.at = nil, err, a.clock.Now()
			}
			return nil, err
		}
		l.Items = []discoveryv1.EndpointSlice{one}
	}
	a.cached, a.cachedErr, a.at = sliceAddresses(l.Items), nil, a.clock.Now()
	return a.cached, nil
}

// sliceAddresses are the IPv4 and IPv6 addresses of EndpointSlices as
// single-address CIDRs, sorted, without duplicates (an endpoint that is not
// ready still counts: the API server may come back there).
func sliceAddresses(items []discoveryv1.EndpointSlice) []string {
	var out []string
	for _, s := range items {
		if s.AddressType != discoveryv1.AddressTypeIPv4 && s.AddressType != discoveryv1.AddressTypeIPv6 {
			continue
		}
		for _, ep := range s.Endpoints {
			for _, a := range ep.Addresses {
				ip := net.ParseIP(a)
				if ip == nil {
					continue
				}
				if ip.To4() != nil {
					out = append(out, ip.String()+"/32")
				} else {
					out = append(out, ip.String()+"/128")
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
