package nodeagent

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"sort"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// NoEndpointsIP is what a Service name resolves to while no pod behind it
// is ready: a loopback address outside every pod IP block (blocks are
// 127.0-199.x.y, see cluster.AcquireIPBlock), so a connection to it is
// refused at once and never leaves 127.0.0.0/8.
const NoEndpointsIP = "127.255.255.254"

// hostsTarget is one pod's hosts file.
type hostsTarget struct {
	ns, name, hostname, ip, path string
}

// hostsManager keeps every running pod's hosts file (REPOT_HOSTS_FILE) in
// step with the Services and the ready pods behind them. It replaces
// cluster DNS plus kube-proxy: a Service name resolves straight to the
// 127.0.0.x addresses of its ready pods, never to its ClusterIP.
type hostsManager struct {
	mu       sync.Mutex
	targets  map[types.UID]hostsTarget
	written  map[types.UID][]byte
	services func() []*corev1.Service
	pods     func() []*corev1.Pod
	dirty    chan struct{}
	logf     func(string, ...any)
}

func newHostsManager(services func() []*corev1.Service, pods func() []*corev1.Pod, logf func(string, ...any)) *hostsManager {
	return &hostsManager{targets: map[types.UID]hostsTarget{}, written: map[types.UID][]byte{},
		services: services, pods: pods, dirty: make(chan struct{}, 1), logf: logf}
}

func (h *hostsManager) register(uid types.UID, t hostsTarget) {
	h.mu.Lock()
	h.targets[uid] = t
	h.mu.Unlock()
	h.write(uid, t, hostsContent(t, h.services(), h.pods()))
}

func (h *hostsManager) unregister(uid types.UID) {
	h.mu.Lock()
	delete(h.targets, uid)
	delete(h.written, uid)
	h.mu.Unlock()
}

// changed marks the hosts files as out of date.
func (h *hostsManager) changed() {
	select {
	case h.dirty <- struct{}{}:
	default:
	}
}

// run rewrites the hosts files after changes until stop is closed.
func (h *hostsManager) run(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-h.dirty:
		}
		h.mu.Lock()
		targets := make(map[types.UID]hostsTarget, len(h.targets))
		for uid, t := range h.targets {
			targets[uid] = t
		}
		h.mu.Unlock()
		svcs, pods := h.services(), h.pods()
		for uid, t := range targets {
			h.write(uid, t, hostsContent(t, svcs, pods))
		}
	}
}

// write replaces the file atomically when its content changed.
func (h *hostsManager) write(uid types.UID, t hostsTarget, data []byte) {
	h.mu.Lock()
	prev, seen := h.written[uid]
	h.mu.Unlock()
	if seen && bytes.Equal(prev, data) {
		return
	}
	tmp := t.path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		h.logf("hosts file %s: %v", t.path, err)
		return
	}
	if err := os.Rename(tmp, t.path); err != nil {
		h.logf("hosts file %s: %v", t.path, err)
		return
	}
	h.mu.Lock()
	if _, live := h.targets[uid]; live {
		h.written[uid] = data
	}
	h.mu.Unlock()
}

// hostsContent renders the hosts file of pod t: the pod itself, then every
// Service with a selector, under its short name (same namespace only) and
// its qualified names, at the addresses of its ready pods or, with none, at
// NoEndpointsIP.
func hostsContent(t hostsTarget, svcs []*corev1.Service, pods []*corev1.Pod) []byte {
	var b bytes.Buffer
	b.WriteString("# written by the repot local cluster's node agent; Services resolve to their ready pods\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	if t.ip != "" {
		fmt.Fprintf(&b, "%s\t%s\n", t.ip, t.hostname)
	}
	sorted := append([]*corev1.Service(nil), svcs...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].Namespace != sorted[j].Namespace {
			return sorted[i].Namespace < sorted[j].Namespace
		}
		return sorted[i].Name < sorted[j].Name
	})
	for _, s := range sorted {
		if len(s.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(s.Spec.Selector)
		fq := s.Name + "." + s.Namespace
		names := fq + " " + fq + ".svc " + fq + ".svc.cluster.local"
		if s.Namespace == t.ns {
			names = s.Name + " " + names
		}
		ips := endpointIPs(s, sel, pods)
		if len(ips) == 0 {
			// No ready pod: as kube-proxy rejects a ClusterIP without
			// endpoints, the name resolves to a loopback address where
			// nothing listens (the dial fails at once and is retried).
			// Leaving it out would send the process to the host's DNS
			// resolver, which may well sit at a private-range address.
			ips = []string{NoEndpointsIP}
		}
		for _, ip := range ips {
			fmt.Fprintf(&b, "%s\t%s\n", ip, names)
		}
	}
	return b.Bytes()
}

// endpointIPs are the sorted loopback IPs of the pods behind a Service that
// are ready (or any running one if the Service publishes not-ready
// addresses).
func endpointIPs(s *corev1.Service, sel labels.Selector, pods []*corev1.Pod) []string {
	var ips []string
	for _, p := range pods {
		if p.Namespace != s.Namespace || p.DeletionTimestamp != nil || p.Status.PodIP == "" ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed ||
			!sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		if ip := net.ParseIP(p.Status.PodIP); ip == nil || !ip.IsLoopback() {
			continue // never hand out anything but 127.0.0.0/8
		}
		if !s.Spec.PublishNotReadyAddresses && !podReady(p) {
			continue
		}
		ips = append(ips, p.Status.PodIP)
	}
	sort.Strings(ips)
	return ips
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
