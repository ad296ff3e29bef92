package nodeagent

import (
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func svc(ns, name string, sel map[string]string, notReady bool) *corev1.Service {
	return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: sel, ClusterIP: "10.0.0.17", PublishNotReadyAddresses: notReady}}
}

func hostPod(ns, name, ip string, labels map[string]string, ready bool, phase corev1.PodPhase) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Status: corev1.PodStatus{Phase: phase, PodIP: ip, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: st}}}}
}

func TestHostsContent(t *testing.T) {
	app := map[string]string{"app": "sim"}
	svcs := []*corev1.Service{
		svc("ev", "sim", app, false),
		svc("other", "sim", app, false),
		svc("ev", "headless-ext", nil, false), // no selector: never resolved
		svc("ev", "warm", map[string]string{"app": "warm"}, true),
	}
	pods := []*corev1.Pod{
		hostPod("ev", "sim-b", "127.0.0.9", app, true, corev1.PodRunning),
		hostPod("ev", "sim-a", "127.0.0.3", app, true, corev1.PodRunning),
		hostPod("ev", "sim-unready", "127.0.0.4", app, false, corev1.PodRunning),
		hostPod("ev", "sim-done", "127.0.0.5", app, true, corev1.PodSucceeded),
		hostPod("ev", "sim-private", "10.1.2.3", app, true, corev1.PodRunning), // never handed out
		hostPod("other", "sim-x", "127.0.0.6", app, true, corev1.PodRunning),
		hostPod("ev", "warm-0", "127.0.0.7", map[string]string{"app": "warm"}, false, corev1.PodRunning),
	}
	got := string(hostsContent(hostsTarget{ns: "ev", name: "runner-0", hostname: "runner-0", ip: "127.0.0.20"}, svcs, pods))
	want := `# written by the repot local cluster's node agent; Services resolve to their ready pods
127.0.0.1	localhost
127.0.0.20	runner-0
127.0.0.3	sim sim.ev sim.ev.svc sim.ev.svc.cluster.local
127.0.0.9	sim sim.ev sim.ev.svc sim.ev.svc.cluster.local
127.0.0.7	warm warm.ev warm.ev.svc warm.ev.svc.cluster.local
127.0.0.6	sim.other sim.other.svc sim.other.svc.cluster.local
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hosts file (-want +got):\n%s", diff)
	}
	if strings.Contains(got, "10.") {
		t.Errorf("hosts file hands out a private-range address:\n%s", got)
	}
}

// A Service whose pods are all unready must still resolve, to a loopback
// address where nothing listens: a name missing from the hosts file sends
// the runner's dialer to the host's DNS resolver, which may sit at a
// private-range address.
func TestHostsContentServiceWithoutReadyPods(t *testing.T) {
	app := map[string]string{"app": "sim"}
	svcs := []*corev1.Service{svc("ev", "sim", app, false), svc("ev", "gone", map[string]string{"app": "gone"}, false)}
	pods := []*corev1.Pod{
		hostPod("ev", "sim-unready", "127.0.0.4", app, false, corev1.PodRunning),
		hostPod("ev", "sim-private", "10.1.2.3", app, true, corev1.PodRunning),
	}
	got := string(hostsContent(hostsTarget{ns: "ev", name: "runner-0", hostname: "runner-0", ip: "127.0.0.20"}, svcs, pods))
	want := `# written by the repot local cluster's node agent; Services resolve to their ready pods
127.0.0.1	localhost
127.0.0.20	runner-0
127.255.255.254	gone gone.ev gone.ev.svc gone.ev.svc.cluster.local
127.255.255.254	sim sim.ev sim.ev.svc sim.ev.svc.cluster.local
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hosts file (-want +got):\n%s", diff)
	}
	ip := net.ParseIP(NoEndpointsIP)
	if ip == nil || !ip.IsLoopback() {
		t.Fatalf("NoEndpointsIP %q is not a loopback address", NoEndpointsIP)
	}
	a := NewIPAllocator(255)
	a.next = ipLast - 300 // the end of the block, where 127.255.255.254 lies
	for range 600 {
		got, err := a.Allocate()
		if err != nil {
			t.Fatal(err)
		}
		if got == NoEndpointsIP {
			t.Fatalf("the pod IP allocator handed out NoEndpointsIP")
		}
	}
}
