package build

import (
	"net"
	"net/url"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// Addresses no egress rule of the operator's NetworkPolicies ever reaches:
// the link-local ranges and the cloud providers' instance metadata
// endpoints, which serve credentials: 169.254.169.254 (AWS, GCP, Azure,
// OpenStack, ...) inside 169.254.0.0/16, Alibaba Cloud's 100.100.100.200,
// AWS's IPv6 fd00:ec2::254 and GCP's IPv6 fd20:ce::254.
var (
	linkLocalV4 = []string{"169.254.0.0/16", "100.100.100.200/32"}
	linkLocalV6 = []string{"fe80::/10", "fd00:ec2::254/128", "fd20:ce::254/128"}
)

// The cluster DNS pods the runner may ask: kube-dns's (and CoreDNS's)
// conventional labels in kube-system.
var (
	dnsNamespace = map[string]string{"kubernetes.io/metadata.name": "kube-system"}
	dnsPods      = map[string]string{"k8s-app": "kube-dns"}
)

// dnsPorts are the ports a runner may use at the cluster DNS pods: 53, where
// most clusters' DNS pods listen, and the container ports the DNS pods name
// "dns" (UDP) and "dns-tcp" (TCP), CoreDNS's and kube-dns's conventional
// names, for DNS pods that listen elsewhere (a CoreDNS that runs without
// NET_BIND_SERVICE on 1053, as the local cluster's). A NetworkPolicy port is the pod's own port,
// after the kube-dns Service's translation, so 53 alone would cut those
// runners off from DNS.
func dnsPorts() []networkingv1.NetworkPolicyPort {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	named := func(p corev1.Protocol, name string) networkingv1.NetworkPolicyPort {
		v := intstr.FromString(name)
		return networkingv1.NetworkPolicyPort{Protocol: &p, Port: &v}
	}
	return []networkingv1.NetworkPolicyPort{netPort(udp, 53), netPort(tcp, 53), named(udp, "dns"), named(tcp, "dns-tcp")}
}

// ServerPolicyName names the per-evaluation NetworkPolicy of the model
// server pods.
func ServerPolicyName(eval string) string { return shorten(eval, maxBaseLen) + "-servers" }

// dnsEgress allows DNS to the cluster DNS pods (dnsPorts) and nowhere else.
func dnsEgress() networkingv1.NetworkPolicyEgressRule {
	return networkingv1.NetworkPolicyEgressRule{
		To: []networkingv1.NetworkPolicyPeer{{
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: dnsNamespace},
			PodSelector:       &metav1.LabelSelector{MatchLabels: dnsPods},
		}},
		Ports: dnsPorts(),
	}
}

func netPort(p corev1.Protocol, n int) networkingv1.NetworkPolicyPort {
	v := intstr.FromInt(n)
	return networkingv1.NetworkPolicyPort{Protocol: &p, Port: &v}
}

// anyAddress is every IPv4 and IPv6 address except the link-local and
// metadata ones: what "anywhere" means in a runner egress rule.
func anyAddress() []networkingv1.NetworkPolicyPeer {
	return []networkingv1.NetworkPolicyPeer{
		{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: linkLocalV4}},
		{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: linkLocalV6}},
	}
}

// linkLocal says whether ip is a link-local or metadata address.
func linkLocal(ip net.IP) bool {
	for _, c := range append(append([]string(nil), linkLocalV4...), linkLocalV6...) {
		if _, n, err := net.ParseCIDR(c); err == nil && n.Contains(ip) {
			return true
		}
	}
	return false
}

// hostCIDR is the single-address CIDR of ip: /32 or /128.
func hostCIDR(ip net.IP) string {
	if ip.To4() != nil {
		return ip.String() + "/32"
	}
	return ip.String() + "/128"
}

// RunnerNetworkPolicy denies all ingress to the evaluation's runner pods and
// allows egress only to: the cluster DNS pods (dnsPorts); each model's server pods on
// the server port; an endpoint model's (or a problems URL's) host and port;
// the S3 artifact store's host and port; and the API server (for the ledger sidecar), when its addresses are known.
// No rule reaches a link-local or metadata address.
func RunnerNetworkPolicy(e *repotv1.RepotEvaluation, o Options) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	egress := []networkingv1.NetworkPolicyEgressRule{dnsEgress()}
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		if HasServer(m) {
			ports := []networkingv1.NetworkPolicyPort{netPort(tcp, serverPort)}
			if HasGPUTelemetry(m) { // the runner reads /telemetry there
				ports = append(ports, netPort(tcp, telemetryPort))
			}
			egress = append(egress, networkingv1.NetworkPolicyEgressRule{
				To:    []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: ServerSelector(e.Name, m.Name)}}},
				Ports: ports,
			})
		}
		if m.Endpoint != nil {
			if r, ok := urlEgress(m.Endpoint.URL); ok {
				egress = append(egress, r)
			}
		}
	}
	if p := e.Spec.Problems; p != nil && p.URL != "" {
		if r, ok := urlEgress(p.URL); ok {
			egress = append(egress, r)
		}
	}
	// The artifact store, for the ledger sidecar's uploads.
	if st := S3Store(e, o); st != nil {
		if r, ok := urlEgress(storeURL(st)); ok {
			egress = append(egress, r)
		}
	}
	api := networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{netPort(tcp, 443), netPort(tcp, 6443)}}
	for _, c := range o.APIServerCIDRs {
		api.To = append(api.To, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	// Without the API server's addresses there is no API server rule: an
	// egress rule without peers would allow every address, and "any
	// address on 443" would let the runner reach any HTTPS service in or
	// outside the cluster. The runners' ledger containers then cannot
	// record, and the planner warns (APIServerUnknown) with what to set.
	if len(api.To) > 0 {
		egress = append(egress, api)
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: ChildMeta(e, RunnerAccessName(e.Name), "", ComponentRunner),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{
				LabelEvaluation: e.Name, LabelComponent: ComponentRunner,
			}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Egress:      egress,
		},
	}
}

// urlEgress allows TCP to a URL's port: to exactly its address when the host
// is an IP literal, else to any address but the link-local ones (a host
// name's addresses cannot be named in a NetworkPolicy). A URL at a
// link-local or metadata address gets no rule (ok false): an egress rule
// without peers would allow every address.
func urlEgress(raw string) (networkingv1.NetworkPolicyEgressRule, bool) {
	u, err := url.Parse(raw)
	n := 443
	if err == nil && u.Scheme == "http" {
		n = 80
	}
	rule := networkingv1.NetworkPolicyEgressRule{To: anyAddress()}
	if err == nil {
		if p, perr := strconv.Atoi(u.Port()); perr == nil {
			n = p
		}
		if ip := net.ParseIP(u.Hostname()); ip != nil {
			if linkLocal(ip) {
				return rule, false
			}
			rule.To = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: hostCIDR(ip)}}}
		}
	}
	rule.Ports = []networkingv1.NetworkPolicyPort{netPort(corev1.ProtocolTCP, n)}
	return rule, true
}

// ServerNetworkPolicy admits ingress to the evaluation's model server pods
// only from: the evaluation's runner pods (the API and the GPU telemetry);
// the evaluation's server pods themselves (each pod's readiness sidecar asks
// its server at the pod IP); and the metrics scraper of
// Options.MetricsScraper, when one is configured. The operator itself makes
// no request to a server (it reads the pods' and Deployments' status from
// the API server), so no rule admits it. The kubelet's probes come from the
// node, which NetworkPolicy implementations admit.
//
// Egress goes only to the evaluation's server pods on the server port (the
// readiness sidecar's request to its own server at the pod IP) and, when the
// evaluation has a vLLM model, to the cluster DNS pods (dnsPorts) and to
// HTTPS (TCP 443) at any address except the link-local and metadata ones:
// vLLM downloads the weights from the model hub (huggingface.co, and the CDN
// hosts it redirects to), whose addresses are not fixed and so cannot be
// named in a NetworkPolicy.
func ServerNetworkPolicy(e *repotv1.RepotEvaluation, o Options) *networkingv1.NetworkPolicy {
	tcp := corev1.ProtocolTCP
	serve := []networkingv1.NetworkPolicyPort{netPort(tcp, serverPort), netPort(tcp, telemetryPort)}
	servers := &metav1.LabelSelector{MatchLabels: map[string]string{LabelEvaluation: e.Name, LabelComponent: ComponentServer}}
	ingress := []networkingv1.NetworkPolicyIngressRule{{
		From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			LabelEvaluation: e.Name, LabelComponent: ComponentRunner,
		}}}},
		Ports: serve,
	}, {
		From:  []networkingv1.NetworkPolicyPeer{{PodSelector: servers.DeepCopy()}},
		Ports: []networkingv1.NetworkPolicyPort{netPort(tcp, serverPort)},
	}}
	if s := o.MetricsScraper; s.NamespaceSelector != nil || s.PodSelector != nil {
		ingress = append(ingress, networkingv1.NetworkPolicyIngressRule{
			From:  []networkingv1.NetworkPolicyPeer{{NamespaceSelector: s.NamespaceSelector.DeepCopy(), PodSelector: s.PodSelector.DeepCopy()}},
			Ports: serve,
		})
	}
	egress := []networkingv1.NetworkPolicyEgressRule{{
		To:    []networkingv1.NetworkPolicyPeer{{PodSelector: servers.DeepCopy()}},
		Ports: []networkingv1.NetworkPolicyPort{netPort(tcp, serverPort)},
	}}
	if slices.ContainsFunc(e.Spec.Models, func(m repotv1.ModelSpec) bool { return m.VLLM != nil }) {
		egress = append(egress, dnsEgress(), networkingv1.NetworkPolicyEgressRule{
			To: anyAddress(), Ports: []networkingv1.NetworkPolicyPort{netPort(tcp, 443)},
		})
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: ChildMeta(e, ServerPolicyName(e.Name), "", ComponentServer),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: *servers,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
			Ingress:     ingress,
			Egress:      egress,
		},
	}
}
