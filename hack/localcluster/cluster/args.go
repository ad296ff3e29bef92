package cluster

import (
	"fmt"
	"net"
	"strings"
)

// Layout is where the control plane keeps its files under the state dir.
type Layout struct {
	Dir string
}

// PKI is the cluster's certificates and keys.
func (l Layout) PKI() PKI { return PKI{Dir: l.Dir + "/pki"} }

// EtcdData is etcd's data directory.
func (l Layout) EtcdData() string { return l.Dir + "/etcd" }

// Logs is the directory of the components' logs.
func (l Layout) Logs() string { return l.Dir + "/logs" }

// Log is the log file of component name.
func (l Layout) Log(name string) string { return l.Dir + "/logs/" + name + ".log" }

// Kubeconfig is the admin kubeconfig users and tests read.
func (l Layout) Kubeconfig() string { return l.Dir + "/kubeconfig" }

// ComponentKubeconfig is the kubeconfig of a component's user.
func (l Layout) ComponentKubeconfig(user string) string {
	return l.Dir + "/kubeconfigs/" + strings.ReplaceAll(user, ":", "-") + ".kubeconfig"
}

// PIDFile holds the pid of the process that runs the cluster.
func (l Layout) PIDFile() string { return l.Dir + "/localcluster.pid" }

// ReadyFile exists once the cluster is ready.
func (l Layout) ReadyFile() string { return l.Dir + "/ready" }

// Ports are the loopback ports of the control plane.
type Ports struct {
	EtcdClient, EtcdPeer, APIServer int
}

// DefaultServiceCIDR is the service IP range. The API server allocates
// ClusterIPs from it; the real node's kube-proxy routes them.
const DefaultServiceCIDR = "10.0.0.0/24"

// DisabledControllers are turned off in kube-controller-manager when the
// control plane runs alone (--nodes 0, everything on loopback): with no node
// there are no pod addresses to publish. With a real node the EndpointSlice
// controller runs (controllerManagerArgs).
var DisabledControllers = []string{
	"endpoints-controller",
	"endpointslice-controller",
	"endpointslice-mirroring-controller",
}

func etcdArgs(l Layout, p Ports) []string {
	client := fmt.Sprintf("http://127.0.0.1:%d", p.EtcdClient)
	peer := fmt.Sprintf("http://127.0.0.1:%d", p.EtcdPeer)
	return []string{
		"--name=localcluster",
		"--data-dir=" + l.EtcdData(),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=localcluster=" + peer,
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	}
}

func apiserverArgs(l Layout, p Ports, serviceCIDR string, advertise net.IP) []string {
	pki := l.PKI()
	if advertise != nil {
		args := apiserverArgs(l, p, serviceCIDR, nil)
		for i, a := range args {
			switch a {
			case "--bind-address=127.0.0.1":
				args[i] = "--bind-address=0.0.0.0"
			case "--advertise-address=127.0.0.1":
				args[i] = "--advertise-address=" + advertise.String()
			case "--endpoint-reconciler-type=none":
				args[i] = "--endpoint-reconciler-type=lease"
			}
		}
		return args
	}
	return []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", p.EtcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", p.APIServer),
		"--tls-cert-file=" + pki.Path(ServingCert),
		"--tls-private-key-file=" + pki.Path(ServingKey),
		"--client-ca-file=" + pki.Path(CACert),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.Path(SAPub),
		"--service-account-signing-key-file=" + pki.Path(SAKey),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--authorization-mode=Node,RBAC",
		// How it reaches real nodes' kubelets (logs, exec): by the node's
		// InternalIP, as the admin (the kubelet asks the API server whether
		// that user may).
		"--kubelet-client-certificate=" + pki.Path(AdminCert),
		"--kubelet-client-key=" + pki.Path(AdminKey),
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--allow-privileged=true",
		// The default "lease" reconciler would publish the advertise address
		// as the kubernetes Service's endpoints, and validation rejects
		// loopback: with a real node (advertise != nil) it is the node
		// bridge's gateway, and the reconciler runs.
		"--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false",
		"--profiling=false",
		"--cert-dir=" + l.Dir + "/apiserver-certs",
	}
}

func controllerManagerArgs(l Layout, serviceCIDR string, realNodes bool) []string {
	if realNodes {
		// Real nodes' pods have real addresses, and kube-proxy needs their
		// Services' EndpointSlices: the EndpointSlice controller runs.
		args := controllerManagerArgs(l, serviceCIDR, false)
		for i, a := range args {
			if strings.HasPrefix(a, "--controllers=") {
				args[i] = "--controllers=*,-endpoints-controller,-endpointslice-mirroring-controller"
			}
		}
		return args
	}
	pki := l.PKI()
	kc := l.ComponentKubeconfig("system:kube-controller-manager")
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--secure-port=0",
		"--leader-elect=false",
		"--controllers=*,-" + strings.Join(DisabledControllers, ",-"),
		"--service-account-private-key-file=" + pki.Path(SAKey),
		"--root-ca-file=" + pki.Path(CACert),
		"--use-service-account-credentials=true",
		"--cluster-signing-cert-file=" + pki.Path(CACert),
		"--cluster-signing-key-file=" + pki.Path(CAKey),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--kube-api-qps=100",
		"--kube-api-burst=200",
		"--profiling=false",
	}
}

func schedulerArgs(l Layout) []string {
	kc := l.ComponentKubeconfig("system:kube-scheduler")
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--secure-port=0",
		"--leader-elect=false",
		"--profiling=false",
	}
}
