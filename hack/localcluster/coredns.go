package main

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// The cluster DNS of the real nodes: CoreDNS (built by hack/build-cluster-bins.sh coredns
// into bin/), run as clusters run it: a Deployment in kube-system behind the
// Service kube-dns at clusterDNSIP, from an image imported into the node,
// with the kubernetes plugin for cluster.local and the node's resolv.conf
// for everything else.
const (
	corednsName    = "coredns"
	corednsVersion = "v1.14.7"
	corednsImage   = "localhost/repot-local/coredns:" + corednsVersion
	// clusterDNSIP is kube-dns's ClusterIP (in cluster.DefaultServiceCIDR).
	clusterDNSIP = "10.0.0.10"
	// corednsPort: CoreDNS listens above 1024, so it runs as non-root with
	// no capabilities; the Service maps 53 to it.
	corednsPort = 1053
)

const corefile = `.:1053 {
    errors
    ready :8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    forward . /etc/resolv.conf
    cache 30
    loop
}
`

// ensureCorednsImage makes corednsImage from the binary when it is missing.
func ensureCorednsImage(ctx context.Context, bin string) error {
	return cluster.BinaryImage{
		Ref: corednsImage, Bin: bin, Path: "/coredns", User: "65532:65532",
		Description: "CoreDNS " + corednsVersion + " built from the Go module proxy (hack/build-cluster-bins.sh coredns)",
		BuildHint:   "build it with: hack/build-cluster-bins.sh coredns",
	}.Ensure(ctx)
}

// startClusterDNS creates CoreDNS's identity, configuration, Service and
// Deployment and waits until kube-dns has a ready endpoint.
func startClusterDNS(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) error {
	const ns = "kube-system"
	labels := map[string]string{"k8s-app": "kube-dns"}
	creates := []func() error{
		func() error {
			_, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: corednsName}}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
				ObjectMeta: metav1.ObjectMeta{Name: "system:" + corednsName},
				Rules: []rbacv1.PolicyRule{
					{APIGroups: []string{""}, Resources: []string{"endpoints", "services", "pods", "namespaces"}, Verbs: []string{"list", "watch"}},
					{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list", "watch"}},
				},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
				ObjectMeta: metav1.ObjectMeta{Name: "system:" + corednsName},
				RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:" + corednsName},
				Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: corednsName, Namespace: ns}},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: corednsName}, Data: map[string]string{"Corefile": corefile},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: "kube-dns", Labels: labels},
				Spec: corev1.ServiceSpec{
					Selector: labels, ClusterIP: clusterDNSIP,
					Ports: []corev1.ServicePort{
						{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(corednsPort)},
						{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(corednsPort)},
					},
				},
			}, metav1.CreateOptions{})
			return err
		},
		func() error {
			_, err := cs.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: corednsName, Labels: labels},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: labels},
						Spec: corev1.PodSpec{
							ServiceAccountName: corednsName,
							// Upstream queries go to the node's resolver.
							DNSPolicy:    corev1.DNSDefault,
							NodeSelector: map[string]string{cluster.RealNodeLabel: "true"},
							SecurityContext: &corev1.PodSecurityContext{
								RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532),
								SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
							},
							Volumes: []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
								LocalObjectReference: corev1.LocalObjectReference{Name: corednsName},
							}}}},
							Containers: []corev1.Container{{
								Name: corednsName, Image: corednsImage, ImagePullPolicy: corev1.PullIfNotPresent,
								Args:         []string{"-conf", "/etc/coredns/Corefile"},
								VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/coredns", ReadOnly: true}},
								Ports: []corev1.ContainerPort{
									{Name: "dns", ContainerPort: corednsPort, Protocol: corev1.ProtocolUDP},
									{Name: "dns-tcp", ContainerPort: corednsPort, Protocol: corev1.ProtocolTCP},
								},
								ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromInt32(8181)}}, PeriodSeconds: 1},
								SecurityContext: &corev1.SecurityContext{
									AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
									Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
								},
							}},
						},
					},
				},
			}, metav1.CreateOptions{})
			return err
		},
	}
	for _, create := range creates {
		if err := create(); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("cluster DNS: %w", err)
		}
	}
	deadline := time.Now().Add(timeout)
	for {
		slices, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=kube-dns"})
		if err == nil && readyEndpoint(slices.Items) {
			return nil
		}
		if time.Now().After(deadline) {
			pods, _ := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "k8s-app=kube-dns"})
			why := "no pod"
			if pods != nil && len(pods.Items) > 0 {
				why = fmt.Sprintf("pod %s is %s %+v", pods.Items[0].Name, pods.Items[0].Status.Phase, pods.Items[0].Status.ContainerStatuses)
			}
			return fmt.Errorf("cluster DNS: kube-dns has no ready endpoint after %v: %s", timeout, why)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func readyEndpoint(slices []discoveryv1.EndpointSlice) bool {
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && *e.Conditions.Ready {
				return true
			}
		}
	}
	return false
}
