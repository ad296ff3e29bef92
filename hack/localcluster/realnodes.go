package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-shellwords"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"repot.dev/repot-operator/hack/localcluster/cluster"
)

func init() {
	register(newRealNodeCheckCommand)
	register(newCleanStaleCommand)
}

// newCleanStaleCommand removes what a local cluster with a real node that
// was killed left on the host, when none runs.
func newCleanStaleCommand() *cobra.Command {
	binDir := "bin"
	cmd := &cobra.Command{
		Use:   "clean-stale",
		Short: "Remove what a killed local cluster left on this host (the bridge repot0, its pods' veths, the CNI's iptables rules, kube-proxy's rules, the NetworkPolicy enforcer's nftables table); refused while a local cluster with a real node runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SilenceUsage = true
			killed, err := lockRealNodeHost("(clean-stale)")
			if err != nil {
				return err
			}
			if err := cleanStaleRealNode(cmd.OutOrStdout(), binDir, killed); err != nil {
				return err
			}
			markRealNodeClean()
			return nil
		},
	}
	cmd.Flags().StringVar(&binDir, "bin-dir", binDir, "directory of kube-proxy (for its --cleanup)")
	return cmd
}

// newRealNodeCheckCommand says whether this host can run a real node.
func newRealNodeCheckCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "real-node-check",
		Short: "Exit 0 when this host can run a real node (root, containerd, runc, buildah, iptables, nft, the CNI plugins); else say what is missing and exit 1",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cluster.RealNodeRequirements(); err != nil {
				cmd.SilenceUsage = true
				return err
			}
			fmt.Println("this host can run a real node")
			return nil
		},
	}
}

// startRealNodes starts o.nodes real nodes (0 or 1, which startCluster
// checked) and waits until each is Ready; they are stopped (and cleaned up)
// with the cluster.
func (lc *localCluster) startRealNodes(ctx context.Context, cs kubernetes.Interface, o upOptions, binDir string) error {
	if o.nodes == 0 {
		return nil
	}
	pause, err := filepath.Abs(o.pause)
	if err != nil {
		return err
	}
	if err := ensureCorednsImage(ctx, filepath.Join(binDir, "coredns")); err != nil {
		return err
	}
	if o.artifactStore {
		if err := cluster.EnsureVersitygwImage(ctx, filepath.Join(binDir, "versitygw")); err != nil {
			return err
		}
	}
	// The local registry, with the project's image in it: pods can pull
	// it with a pull secret (DIR/registry.json has the credentials).
	reg, err := cluster.StartRegistry(ctx, filepath.Join(lc.Layout.Dir, "registry"))
	if err != nil {
		return err
	}
	lc.cleanups = append(lc.cleanups, reg.Stop)
	var pushed []string
	for _, img := range o.nodeImages {
		repoTag := img[strings.LastIndex(img, "/")+1:]
		ref, err := reg.Push(ctx, img, repoTag)
		if err != nil {
			return err
		}
		pushed = append(pushed, ref)
	}
	info, err := json.MarshalIndent(map[string]any{"host": reg.Host, "user": reg.User, "password": reg.Password, "images": pushed}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(lc.Layout.Dir, "registry.json"), info, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(lc.log, "local registry at %s (htpasswd; credentials in %s): %v\n", reg.Host, filepath.Join(lc.Layout.Dir, "registry.json"), pushed)
	netpol := filepath.Join(binDir, "kube-network-policies")
	if _, err := os.Stat(netpol); err != nil {
		return fmt.Errorf("the real nodes' NetworkPolicy enforcer: %w (build it with: hack/build-cluster-bins.sh kube-network-policies)", err)
	}
	if err := grantNetworkPolicyEnforcer(ctx, cs); err != nil {
		return err
	}
	images := append(append([]string(nil), o.nodeImages...), corednsImage)
	if o.artifactStore {
		images = append(images, cluster.VersitygwImage)
	}
	for i := range o.nodes {
		name := fmt.Sprintf("%s%d", cluster.RealNodePrefix, i)
		t0 := time.Now()
		fmt.Fprintf(lc.log, "real node %s: starting containerd, importing %v, starting the kubelet...\n", name, o.nodeImages)
		n, err := cluster.StartRealNode(ctx, cluster.RealNodeOptions{
			Name: name, Dir: filepath.Join(lc.Layout.Dir, "real", name),
			Kubelet: filepath.Join(binDir, "kubelet"), KubeProxy: filepath.Join(binDir, "kube-proxy"), PKI: lc.Layout.PKI(), Server: lc.cp.Server,
			PodCIDR: realNodePodCIDR(i), Bridge: realNodeBridge(i),
			Pause: pause, Images: images, ClusterDNS: clusterDNSIP, PlainHTTPRegistries: []string{reg.Host},
			GPUs:          o.gpus,
			Labels:        []string{cluster.RealNodeLabel + "=true", "nvidia.com/gpu.product=" + o.gpuProduct},
			NetworkPolicy: netpol,
			Log:           lc.log,
		})
		if err != nil {
			return fmt.Errorf("real node %s: %w", name, err)
		}
		lc.realNodes = append(lc.realNodes, n)
		lc.cleanups = append(lc.cleanups, func() {
			fmt.Fprintf(lc.log, "stopping real node %s...\n", name)
			// The Node object goes first, so nothing is scheduled there
			// while it stops.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = cs.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
			n.Stop()
		})
		if err := waitNodeReady(ctx, cs, n, name, o.readyTimeout); err != nil {
			return err
		}
		fmt.Fprintf(lc.log, "real node %s: Ready in %v\n", name, time.Since(t0).Round(100*time.Millisecond))
		if i == 0 {
			t1 := time.Now()
			if err := startClusterDNS(ctx, cs, o.readyTimeout); err != nil {
				return err
			}
			fmt.Fprintf(lc.log, "cluster DNS: CoreDNS %s at %s (kube-dns), ready in %v\n", corednsVersion, clusterDNSIP, time.Since(t1).Round(100*time.Millisecond))
			if o.artifactStore {
				t2 := time.Now()
				data := filepath.Join(lc.Layout.Dir, "artifacts")
				s, err := cluster.StartArtifactStore(ctx, cs, data, o.keepData, o.readyTimeout)
				if err != nil {
					return err
				}
				fmt.Fprintf(lc.log, "artifact store: versitygw at %s (from the host: %s), bucket %s, credentials in Secret %s/%s, objects in %s; ready in %v\n",
					s.Location.Endpoint, s.HostEndpoint, s.Location.Bucket, cluster.ArtifactStoreNamespace, cluster.ArtifactStoreSecret, data, time.Since(t2).Round(100*time.Millisecond))
			}
		}
	}
	return nil
}

func waitNodeReady(ctx context.Context, cs kubernetes.Interface, n *cluster.RealNode, name string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			for _, c := range node.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
			}
		}
		if err := n.Failed(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("real node %s not Ready after %v (logs in %s)", name, timeout, filepath.Join("real", name, "logs"))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// realNodePodCIDR and realNodeBridge are real node i's pod addresses and
// bridge; the bridge's gateway, .1, is where its pods reach the API server.
func realNodePodCIDR(i int) string { return fmt.Sprintf("10.88.%d.0/24", i) }
func realNodeBridge(i int) string  { return fmt.Sprintf("repot%d", i) }
func realNodeGateway(i int) net.IP { return net.IPv4(10, 88, byte(i), 1) }

// realNodeLock is the host-wide lock a local cluster with a real node holds
// for its whole life: one real node per host (the bridge, the device-plugin
// socket, the cgroup root and the node ports are the host's). A cluster that
// was killed releases it with its process, so the next one can tell a bridge
// left behind from one in use.
const realNodeLock = "/run/repot-localcluster-realnode.lock"

// heldRealNodeLock keeps the lock's file open (and so the lock held) until
// the process exits.
var heldRealNodeLock *os.File

// lockRealNodeHost takes realNodeLock, or says which cluster holds it. The
// lock file names its holder until the holder stopped cleanly
// (markRealNodeClean): killed says the last holder did not, so what it set
// up on the host may be left there.
func lockRealNodeHost(stateDir string) (killed bool, err error) {
	f, err := os.OpenFile(realNodeLock, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(realNodeLock)
		f.Close()
		return false, fmt.Errorf("a local cluster with a real node already runs on this host (%s); stop it first (one real node per host)",
			strings.TrimSpace(string(holder)))
	}
	prev, _ := io.ReadAll(f)
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("pid %d, state dir %s\n", os.Getpid(), stateDir)), 0)
	heldRealNodeLock = f
	return strings.TrimSpace(string(prev)) != "", nil
}

// markRealNodeClean records that this process left the host as it found
// it: the next holder of realNodeLock has nothing to clean.
func markRealNodeClean() {
	if heldRealNodeLock != nil {
		_ = heldRealNodeLock.Truncate(0)
	}
}

// cleanStaleRealNode removes what a local cluster with a real node that was
// killed left on the host: the bridge repot0 with its pods' veths, and the CNI bridge plugin's iptables rules and
// chains, which carry the comment of the network repot-local-<node>; and,
// when the lock says its last holder was killed, kube-proxy's chains
// (kube-proxy --cleanup from binDir) and the NetworkPolicy enforcer's
// nftables table. The caller holds realNodeLock, so nothing of it is in
// use. Its state directory's mounts go when a cluster starts in that
// directory; the pods' network namespace files under /run/netns stay
// (containerd names them, nothing says which were this cluster's), and
// hold nothing once their veths are gone.
func cleanStaleRealNode(log io.Writer, binDir string, killed bool) error {
	var errs []error
	if killed {
		if kp := filepath.Join(binDir, "kube-proxy"); fileExists(kp) {
			if out, err := exec.Command(kp, "--cleanup").CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("kube-proxy --cleanup: %w: %s", err, out))
			} else {
				fmt.Fprintln(log, "removed kube-proxy's rules, left by a local cluster that was killed")
			}
		}
		errs = append(errs, cluster.DeleteNetworkPolicyTable())
	}
	br := realNodeBridge(0)
	if _, err := net.InterfaceByName(br); err == nil {
		fmt.Fprintf(log, "deleting bridge %s, left by a local cluster that was killed\n", br)
		ports, _ := os.ReadDir("/sys/class/net/" + br + "/brif")
		if out, err := exec.Command("ip", "link", "del", br).CombinedOutput(); err != nil {
			return fmt.Errorf("a network device %s exists and cannot be deleted: %w: %s", br, err, out)
		}
		deleteStaleVeths(log, ports)
	}
	errs = append(errs, deleteStaleCNIRules(log))
	return errors.Join(errs...)
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// deleteStaleCNIRules deletes, in the nat and filter tables, the rules whose
// comment names a local cluster's CNI network ("repot-local-"), then the
// CNI-* chains those rules jumped to, once empty of anything else.
func deleteStaleCNIRules(log io.Writer) error {
	var errs []error
	for _, table := range []string{"nat", "filter"} {
		out, err := exec.Command("iptables", "-t", table, "-S").Output()
		if err != nil {
			continue // no iptables here: nothing was left in it
		}
		chains := map[string]bool{}
		var rules [][]string
		for _, line := range strings.Split(string(out), "\n") {
			if !strings.HasPrefix(line, "-A ") || !strings.Contains(line, `repot-local-`) {
				continue
			}
			args, err := splitRule(line)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			rules = append(rules, args)
			if strings.HasPrefix(args[1], "CNI-") {
				chains[args[1]] = true
			}
			for i := range args[:len(args)-1] {
				if args[i] == "-j" && strings.HasPrefix(args[i+1], "CNI-") {
					chains[args[i+1]] = true
				}
			}
		}
		for _, args := range rules {
			args[0] = "-D"
			if out, err := exec.Command("iptables", append([]string{"-t", table}, args...)...).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("iptables -t %s %v: %w: %s", table, args, err, out))
			}
		}
		for chain := range chains {
			if exec.Command("iptables", "-t", table, "-F", chain).Run() == nil && exec.Command("iptables", "-t", table, "-X", chain).Run() == nil {
				fmt.Fprintf(log, "deleted stale chain %s/%s\n", table, chain)
			}
		}
		if len(rules) > 0 {
			fmt.Fprintf(log, "deleted %d stale CNI rule(s) in table %s\n", len(rules), table)
		}
	}
	return errors.Join(errs...)
}

// splitRule splits a line of `iptables -S` into arguments: its comments
// are double-quoted with backslash escapes, as a shell would read them.
func splitRule(line string) ([]string, error) {
	args, err := shellwords.Parse(line)
	if err != nil {
		return nil, fmt.Errorf("iptables rule %q: %w", line, err)
	}
	if len(args) < 2 {
		return nil, fmt.Errorf("iptables rule too short: %s", line)
	}
	return args, nil
}

// makeRealNodeBridge creates real node 0's bridge with its gateway address
// before the API server starts, so that the API server can advertise that
// address (the CNI bridge plugin takes the bridge as it finds it). The
// node's Stop deletes it. The caller holds realNodeLock and has removed
// what a killed cluster left (cleanStaleRealNode).
func makeRealNodeBridge() error {
	br, gw := realNodeBridge(0), realNodeGateway(0)
	for _, args := range [][]string{
		{"link", "add", br, "type", "bridge"},
		{"addr", "add", gw.String() + "/24", "dev", br},
		{"link", "set", br, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			_ = exec.Command("ip", "link", "del", br).Run()
			return fmt.Errorf("ip %v: %w: %s", args, err, out)
		}
	}
	return nil
}

// deleteStaleVeths deletes the host ends of the pod veths on the given
// bridge ports, as a killed cluster leaves them (deleting one end deletes
// its peer in the pod's network namespace).
func deleteStaleVeths(log io.Writer, ports []os.DirEntry) {
	for _, p := range ports {
		if err := exec.Command("ip", "link", "del", p.Name()).Run(); err == nil {
			fmt.Fprintf(log, "deleted stale veth %s\n", p.Name())
		}
	}
}

// grantNetworkPolicyEnforcer lets the real nodes' NetworkPolicy enforcer
// (cluster.NetworkPolicyUser) read what it decides by: NetworkPolicies,
// pods, namespaces and nodes. Nothing else.
func grantNetworkPolicyEnforcer(ctx context.Context, cs kubernetes.Interface) error {
	read := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: cluster.NetworkPolicyRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"pods", "namespaces", "nodes"}, Verbs: read},
			{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: read},
		},
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: cluster.NetworkPolicyRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cluster.NetworkPolicyRole},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: cluster.NetworkPolicyUser}},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("the NetworkPolicy enforcer's ClusterRole: %w", err)
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("the NetworkPolicy enforcer's ClusterRoleBinding: %w", err)
	}
	return nil
}
