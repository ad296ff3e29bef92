package build

import (
	"net"
	"net/url"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
)

// RunnerNetworkPolicy denies all ingress to the evaluation's runner pods and
// allows egress only to: DNS; each model's server pods on the server port;
// an endpoint model's (or a problems URL's) host and port; and the API
// server (for the ledger sidecar).
func RunnerNetworkPolicy(e *repotv1.RepotEvaluation, o Options) *networkingv1.NetworkPolicy {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	port := func(p corev1.Protocol, n int) networkingv1.NetworkPolicyPort {
		v := intstr.FromInt(n)
		return networkingv1.NetworkPolicyPort{Protocol: &p, Port: &v}
	}
	egress := []networkingv1.NetworkPolicyEgressRule{{
		Ports: []networkingv1.NetworkPolicyPort{port(udp, 53), port(tcp, 53)},
	}}
	for i := range e.Spec.Models {
		m := &e.Spec.Models[i]
		if HasServer(m) {
			ports := []networkingv1.NetworkPolicyPort{port(tcp, serverPort)}
			if HasGPUTelemetry(m) { // the runner reads /telemetry there
				ports = append(ports, port(tcp, telemetryPort))
			}
			egress = append(egress, networkingv1.NetworkPolicyEgressRule{
				To:    []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: ServerSelector(e.Name, m.Name)}}},
				Ports: ports,
			})
		}
		if m.Endpoint != nil {
			egress = append(egress, urlEgress(m.Endpoint.URL, port))
		}
	}
	if p := e.Spec.Problems; p != nil && p.URL != "" {
		egress = append(egress, urlEgress(p.URL, port))
	}
	api := networkingv1.NetworkPolicyEgressRule{Ports: []networkingv1.NetworkPolicyPort{port(tcp, 443), port(tcp, 6443)}}
	for _, c := range o.APIServerCIDRs {
		api.To = append(api.To, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: c}})
	}
	egress = append(egress, api)
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
// is an IP literal, else to any address (a host name's addresses cannot be
// named in a NetworkPolicy).
func urlEgress(raw string, port func(corev1.Protocol, int) networkingv1.NetworkPolicyPort) networkingv1.NetworkPolicyEgressRule {
	u, err := url.Parse(raw)
	n := 443
	if err == nil && u.Scheme == "http" {
		n = 80
	}
	var rule networkingv1.NetworkPolicyEgressRule
	if err == nil {
		if p, perr := strconv.Atoi(u.Port()); perr == nil {
			n = p
		}
		if ip := net.ParseIP(u.Hostname()); ip != nil {
			bits := 32
			if ip.To4() == nil {
				bits = 128
			}
			rule.To = []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: ip.String() + "/" + strconv.Itoa(bits)}}}
		}
	}
	rule.Ports = []networkingv1.NetworkPolicyPort{port(corev1.ProtocolTCP, n)}
	return rule
}
