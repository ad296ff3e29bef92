package cluster

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// The real node's NetworkPolicy enforcer is kube-network-policies
// (sigs.k8s.io/kube-network-policies, Kubernetes SIG Network), built by
// hack/build-cluster-bins.sh kube-network-policies. It runs on the node as root, beside kube-proxy: an
// nftables table (NetworkPolicyTable) sends the first packet of each
// connection from or to a pod that a NetworkPolicy selects to an nfqueue,
// and the enforcer accepts or drops it by the policies. It fails closed:
// while it is not running, those packets are dropped.
const (
	// NetworkPolicyUser is the enforcer's client identity; the
	// NetworkPolicyRole ClusterRole lets it read what it decides by.
	NetworkPolicyUser = "system:kube-network-policies"
	NetworkPolicyRole = "repot-local:kube-network-policies"
	// NetworkPolicyTable is the enforcer's nftables table (family inet).
	NetworkPolicyTable = "kube-network-policies"
)

// startNetworkPolicy starts the node's enforcer with its own client
// certificate.
func (n *RealNode) startNetworkPolicy() (err error) {
	o := n.o
	id := ClientIdentity{Cert: "netpol-" + o.Name + ".crt", Key: "netpol-" + o.Name + ".key", User: NetworkPolicyUser}
	if err := o.PKI.EnsureClient(time.Now(), id); err != nil {
		return err
	}
	if err := o.PKI.WriteKubeconfig(o.path("netpol.kubeconfig"), o.Server, id); err != nil {
		return err
	}
	n.netpol, err = startComponent("kube-network-policies "+o.Name, o.NetworkPolicy, []string{
		"--kubeconfig=" + o.path("netpol.kubeconfig"),
		"--hostname-override=" + o.Name,
		// The DNS race workaround is for kernels before 6.12.
		"--netfilter-bug-1766-fix=false",
		"--metrics-bind-address=127.0.0.1:0",
	}, o.path("logs", "kube-network-policies.log"))
	if err != nil {
		return fmt.Errorf("%w (build it with: hack/build-cluster-bins.sh kube-network-policies)", err)
	}
	return nil
}

// stopNetworkPolicy stops the enforcer with SIGINT, on which it deletes its
// nftables table, and deletes the table itself when it is still there (the
// enforcer was killed, say).
func (n *RealNode) stopNetworkPolicy() error {
	c := n.netpol
	if c.alive() {
		_ = c.cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-c.exited:
		case <-time.After(10 * time.Second):
		}
	}
	c.stop(5 * time.Second)
	return DeleteNetworkPolicyTable()
}

// DeleteNetworkPolicyTable deletes the enforcer's nftables table, if any.
func DeleteNetworkPolicyTable() error {
	if exec.Command("nft", "list", "table", "inet", NetworkPolicyTable).Run() != nil {
		return nil // no table (or no nft)
	}
	if out, err := exec.Command("nft", "delete", "table", "inet", NetworkPolicyTable).CombinedOutput(); err != nil {
		return fmt.Errorf("nft delete table inet %s: %w: %s", NetworkPolicyTable, err, strings.TrimSpace(string(out)))
	}
	return nil
}
