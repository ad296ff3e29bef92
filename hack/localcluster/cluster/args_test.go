package cluster

import (
	"net"
	"net/url"
	"strings"
	"testing"
)

// Every address a component listens on or dials must be on loopback.
func TestComponentAddressesAreLoopback(t *testing.T) {
	l := Layout{Dir: "/state"}
	p := Ports{EtcdClient: 1, EtcdPeer: 2, APIServer: 3}
	var all []string
	all = append(all, etcdArgs(l, p)...)
	all = append(all, apiserverArgs(l, p, DefaultServiceCIDR, nil)...)
	all = append(all, controllerManagerArgs(l, DefaultServiceCIDR, false)...)
	all = append(all, schedulerArgs(l)...)
	for _, a := range all {
		name, value, _ := strings.Cut(a, "=")
		switch {
		case strings.HasSuffix(name, "-address"):
			if ip := net.ParseIP(value); ip == nil || !ip.IsLoopback() {
				t.Errorf("%s: not a loopback address", a)
			}
		case strings.HasSuffix(name, "-urls") || name == "--etcd-servers" || name == "--initial-cluster":
			for _, v := range strings.Split(value, ",") {
				_, v, _ = strings.Cut(v, "localcluster=")
				if v == "" {
					_, v, _ = strings.Cut(a, "=")
				}
				u, err := url.Parse(v)
				if err != nil || u.Hostname() != "127.0.0.1" {
					t.Errorf("%s: URL not on 127.0.0.1", a)
				}
			}
		}
	}
	if !strings.Contains(strings.Join(controllerManagerArgs(l, DefaultServiceCIDR, false), " "), "-endpointslice-controller") {
		t.Errorf("the EndpointSlice controller must be off: it cannot publish loopback pod IPs")
	}
}
