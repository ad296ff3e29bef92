package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// RealNode is a real Kubernetes node on this host: containerd and runc
// (Debian's packages) with the standard CNI plugins (bridge, host-local,
// portmap, loopback), and a kubelet built from the module proxy at the
// Kubernetes version go.mod pins (hack/build-cluster-bins.sh node). Its pods
// are containers of images imported from buildah's store (the project's
// image, built from the Dockerfile by hack/build-image.sh); nothing is pulled
// from a registry. Everything it starts lives under Dir and is removed by
// Stop: pod sandboxes (through the CRI, so that the CNI plugins release their
// addresses and rules), processes, mounts, the bridge, and the kernel
// settings the kubelet changed.
type RealNode struct {
	o          RealNodeOptions
	containerd *component
	kubelet    *component
	kubeProxy  *component
	netpol     *component
	gpus       *simulatedGPUPlugin
	sysctls    map[string]string // the values before the kubelet changed them
	// hadKubeFirewall: the filter table had KUBE-FIREWALL before (kube-proxy
	// makes it and its --cleanup leaves it).
	hadKubeFirewall bool
	// madeKubeletDir: /var/lib/kubelet did not exist before (the kubelet's
	// device manager keeps its socket there, whatever --root-dir says).
	madeKubeletDir bool
}

// RealNodeOptions say what a real node runs.
type RealNodeOptions struct {
	// Name is the node's name (and its kubelet's client identity,
	// system:node:NAME).
	Name string
	// Dir holds everything of the node: containerd's root and state, the
	// kubelet's root, pod logs, CNI configuration and addresses, logs.
	Dir string
	// Kubelet is the kubelet binary.
	Kubelet string
	// KubeProxy is the kube-proxy binary (iptables mode, Service ClusterIPs
	// for the node's pods); empty: none.
	KubeProxy string
	// NetworkPolicy is the kube-network-policies binary
	// (hack/build-cluster-bins.sh kube-network-policies), the node's NetworkPolicy enforcer; empty:
	// NetworkPolicy is not enforced on the node.
	NetworkPolicy string
	// PKI and Server: the node's client certificate is made in PKI; the
	// kubelet talks to the API server at Server.
	PKI    PKI
	Server string
	// PlainHTTPRegistries are registries (HOST:PORT) containerd reaches over
	// plain HTTP (the local registry on loopback).
	PlainHTTPRegistries []string
	// ClusterDNS is the cluster DNS Service's address the kubelet gives
	// pods (their resolv.conf); empty: the host's resolv.conf.
	ClusterDNS string
	// PodCIDR is the node's pod address range (the bridge's subnet).
	PodCIDR string
	// Bridge is the name of the Linux bridge the pods are attached to.
	Bridge string
	// Pause is the static pause binary (hack/localcluster/pause), made
	// into the sandbox image PauseImage when buildah lacks it.
	Pause string
	// Images are buildah image references imported into the node's
	// containerd (the pods' images).
	Images []string
	// GPUs is the number of SIMULATED nvidia.com/gpu devices the node's
	// device plugin advertises (0: no plugin).
	GPUs int
	// Labels are registered with the node.
	Labels []string // key=value
	Log    io.Writer
}

// PauseImage is the pod sandbox image of real nodes (a stand-in for
// registry.k8s.io/pause, made from hack/localcluster/pause).
const PauseImage = "localhost/repot-local/pause:1"

// criNamespace is the containerd namespace of the CRI plugin.
const criNamespace = "k8s.io"

// kubeletSysctls are the kernel settings the kubelet sets at start
// (protectKernelDefaults: false); Stop puts back what was there.
var kubeletSysctls = []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops", "net/ipv4/conf/all/route_localnet"}

func (o RealNodeOptions) path(elem ...string) string {
	return filepath.Join(append([]string{o.Dir}, elem...)...)
}
func (o RealNodeOptions) socket() string { return o.path("containerd.sock") }

// RealNodeRequirements returns what this host lacks to run a real node, or
// nil: root, containerd, runc, ctr, buildah and the CNI plugins.
func RealNodeRequirements() error {
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (containerd, the kubelet and the CNI plugins need it)")
	}
	for _, c := range []string{"containerd", "ctr", "runc", "buildah", "iptables", "nft"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	for _, p := range []string{"bridge", "host-local", "portmap", "loopback"} {
		if _, err := os.Stat(filepath.Join(cniBinDir, p)); err != nil {
			missing = append(missing, "CNI plugin "+p+" in "+cniBinDir)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("a real node needs %s (Debian: apt-get install containerd runc buildah containernetworking-plugins iptables nftables)", strings.Join(missing, ", "))
	}
	return nil
}

// cniBinDir is where Debian's containernetworking-plugins installs the plugins.
const cniBinDir = "/usr/lib/cni"

// StartRealNode starts containerd, imports the images and starts the
// kubelet; it returns once the kubelet runs (the caller waits for the
// node's Ready condition). On error, what was started is stopped.
func StartRealNode(ctx context.Context, o RealNodeOptions) (n *RealNode, err error) {
	if err := RealNodeRequirements(); err != nil {
		return nil, err
	}
	if len(o.socket()) >= 100 {
		return nil, fmt.Errorf("real node %s: state dir %s is too deep for a unix socket path (use a shorter --dir)", o.Name, o.Dir)
	}
	n = &RealNode{o: o, sysctls: map[string]string{}}
	defer func() {
		if err != nil {
			n.Stop()
		}
	}()
	// A fresh node every time, as etcd starts empty: containers and
	// sandboxes of an earlier run (killed, say) must not come back.
	if err := unmountUnder(o.Dir); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(o.Dir); err != nil {
		return nil, err
	}
	for _, d := range []string{"containerd", "net.d", "kubelet", "pod-logs", "logs"} {
		if err := os.MkdirAll(o.path(d), 0o755); err != nil {
			return nil, err
		}
	}
	if _, err := os.Stat(devicePluginDir); os.IsNotExist(err) {
		_, err := os.Stat(filepath.Dir(devicePluginDir))
		n.madeKubeletDir = os.IsNotExist(err)
	}
	n.hadKubeFirewall = exec.Command("iptables", "-t", "filter", "-S", "KUBE-FIREWALL").Run() == nil
	for _, s := range kubeletSysctls {
		if v, err := os.ReadFile("/proc/sys/" + s); err == nil {
			n.sysctls[s] = strings.TrimSpace(string(v))
		}
	}
	if err := n.writeConfigs(); err != nil {
		return nil, err
	}
	n.containerd, err = startComponent("containerd "+o.Name, mustLookPath("containerd"),
		[]string{"--config", o.path("containerd.toml")}, o.path("logs", "containerd.log"))
	if err != nil {
		return nil, err
	}
	if err := n.waitContainerd(ctx, 20*time.Second); err != nil {
		return nil, err
	}
	if err := ensurePauseImage(ctx, o.Pause); err != nil {
		return nil, err
	}
	for _, img := range append([]string{PauseImage}, o.Images...) {
		if err := n.importImage(ctx, img); err != nil {
			return nil, err
		}
	}
	id := ClientIdentity{Cert: "node-" + o.Name + ".crt", Key: "node-" + o.Name + ".key", User: "system:node:" + o.Name, Groups: []string{"system:nodes"}}
	if err := o.PKI.EnsureClient(time.Now(), id); err != nil {
		return nil, err
	}
	if err := o.PKI.WriteKubeconfig(o.path("kubeconfig"), o.Server, id); err != nil {
		return nil, err
	}
	// A kubelet.sock of an earlier run would pass for this kubelet's.
	_ = os.Remove(filepath.Join(devicePluginDir, "kubelet.sock"))
	n.kubelet, err = startComponent("kubelet "+o.Name, o.Kubelet, n.kubeletArgs(), o.path("logs", "kubelet.log"))
	if err != nil {
		return nil, fmt.Errorf("%w (build it with: hack/build-cluster-bins.sh node)", err)
	}
	if o.KubeProxy != "" {
		pid := ClientIdentity{Cert: "kube-proxy-" + o.Name + ".crt", Key: "kube-proxy-" + o.Name + ".key", User: "system:kube-proxy"}
		if err := o.PKI.EnsureClient(time.Now(), pid); err != nil {
			return nil, err
		}
		if err := o.PKI.WriteKubeconfig(o.path("kube-proxy.kubeconfig"), o.Server, pid); err != nil {
			return nil, err
		}
		n.kubeProxy, err = startComponent("kube-proxy "+o.Name, o.KubeProxy, []string{"--config=" + o.path("kube-proxy.yaml")}, o.path("logs", "kube-proxy.log"))
		if err != nil {
			return nil, fmt.Errorf("%w (build it with: hack/build-cluster-bins.sh node)", err)
		}
	}
	if o.NetworkPolicy != "" {
		if err := n.startNetworkPolicy(); err != nil {
			return nil, err
		}
	}
	if o.GPUs > 0 {
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		n.gpus, err = startSimulatedGPUPlugin(pctx, devicePluginDir, o.Name, o.GPUs)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	return n, nil
}

// devicePluginDir is where the kubelet's device manager listens; the
// kubelet does not move it with --root-dir.
const devicePluginDir = "/var/lib/kubelet/device-plugins"

func mustLookPath(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return name // startComponent reports it
	}
	return p
}

// writeConfigs writes containerd's configuration (the CRI plugin with runc,
// cgroupfs and this node's CNI directory), the CNI network and the
// kubelet's configuration.
func (n *RealNode) writeConfigs() error {
	o := n.o
	containerd := fmt.Sprintf(`version = 2
root = %q
state = %q
[grpc]
  address = %q
[plugins."io.containerd.internal.v1.opt"]
  path = %q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  # The VM withholds CAP_SYS_RESOURCE even from root: without this every
  # sandbox fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %q
    conf_dir = %q
%s`, o.path("containerd", "root"), o.path("containerd", "state"), o.socket(), o.path("containerd", "opt"), PauseImage, cniBinDir, o.path("net.d"), plainHTTPMirrors(o.PlainHTTPRegistries))
	cni := fmt.Sprintf(`{"cniVersion": "1.0.0", "name": "repot-local-%s", "plugins": [
  {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}], "dataDir": %q}},
  {"type": "portmap", "capabilities": {"portMappings": true}},
  {"type": "loopback"}
]}
`, o.Name, o.Bridge, o.PodCIDR, o.path("cni-ipam"))
	kubelet := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# This host: cgroup v1 beside a unified hierarchy, swap on, no systemd.
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://%s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %q}
authorization: {mode: Webhook}
# The node's own address (the kubelet takes the default route's; it refuses
# loopback): the API server reaches logs and exec there, authenticated.
address: 0.0.0.0
port: 10250
readOnlyPort: 0
healthzPort: 0
clusterDomain: cluster.local
%sresolvConf: /etc/resolv.conf
podLogsDir: %q
podCIDR: %q
serializeImagePulls: false
# The images are imported, never pulled: never collect them.
imageGCHighThresholdPercent: 100
evictionHard: {}
makeIPTablesUtilChains: false
protectKernelDefaults: false
`, o.socket(), o.PKI.Path(CACert), clusterDNS(o.ClusterDNS), o.path("pod-logs"), o.PodCIDR)
	kubeProxy := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: %q
clusterCIDR: %q
clientConnection: {kubeconfig: %q}
metricsBindAddress: 127.0.0.1:10249
healthzBindAddress: ""
# Leave the host's conntrack and localhost settings alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
iptables: {localhostNodePorts: false}
`, o.Name, o.PodCIDR, o.path("kube-proxy.kubeconfig"))
	for name, data := range map[string]string{
		"kube-proxy.yaml":         kubeProxy,
		"containerd.toml":         containerd,
		"net.d/10-repot.conflist": cni,
		"kubelet-config.yaml":     kubelet,
	} {
		if err := os.WriteFile(o.path(name), []byte(data), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func (n *RealNode) kubeletArgs() []string {
	o := n.o
	args := []string{
		"--config=" + o.path("kubelet-config.yaml"),
		"--kubeconfig=" + o.path("kubeconfig"),
		"--hostname-override=" + o.Name,
		"--root-dir=" + o.path("kubelet"),
		"--cert-dir=" + o.path("kubelet", "pki"),
		"--v=1",
	}
	if len(o.Labels) > 0 {
		args = append(args, "--node-labels="+strings.Join(o.Labels, ","))
	}
	return args
}

func (n *RealNode) ctr(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "ctr", append([]string{"-a", n.o.socket(), "-n", criNamespace}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("ctr %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return out, nil
}

func (n *RealNode) waitContainerd(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := n.ctr(ctx, "version"); err == nil {
			return nil
		}
		if !n.containerd.alive() {
			return n.containerd.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("containerd of %s did not answer in %s; see %s", n.o.Name, timeout, n.containerd.log)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// importImage copies a buildah image into the node's containerd.
func (n *RealNode) importImage(ctx context.Context, ref string) error {
	archive := n.o.path("image.tar")
	defer os.Remove(archive)
	if out, err := exec.CommandContext(ctx, "buildah", "push", "-q", ref, "docker-archive:"+archive+":"+ref).CombinedOutput(); err != nil {
		return fmt.Errorf("image %s is not in buildah's store (build it with: make docker-build): %w: %s", ref, err, strings.TrimSpace(string(out)))
	}
	_, err := n.ctr(ctx, "images", "import", archive)
	return err
}

// BinaryImage is a one-binary image made with buildah: the static binary
// Bin at Path on an empty base, run as User.
type BinaryImage struct {
	Ref, Bin, Path, User, Description string
	// BuildHint says how to make Bin when it is missing.
	BuildHint string
}

// Ensure makes the image in buildah's store when it is missing.
func (b BinaryImage) Ensure(ctx context.Context) error {
	if exec.CommandContext(ctx, "buildah", "inspect", "--type", "image", b.Ref).Run() == nil {
		return nil
	}
	if _, err := os.Stat(b.Bin); err != nil {
		return fmt.Errorf("image %s: %w (%s)", b.Ref, err, b.BuildHint)
	}
	run := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "buildah", args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("buildah %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	}
	c, err := run("from", "scratch")
	if err != nil {
		return err
	}
	for _, s := range [][]string{
		{"copy", c, b.Bin, b.Path},
		{"config", "--entrypoint", fmt.Sprintf("[%q]", b.Path), "--user", b.User,
			"--label", "org.opencontainers.image.description=" + b.Description, c},
		{"commit", "-q", "--rm", c, b.Ref},
	} {
		if _, err := run(s...); err != nil {
			_, _ = run("rm", c)
			return err
		}
	}
	return nil
}

// ensurePauseImage makes PauseImage from the pause binary when it is
// missing.
func ensurePauseImage(ctx context.Context, pause string) error {
	return BinaryImage{
		Ref: PauseImage, Bin: pause, Path: "/pause", User: "65535:65535",
		Description: "LOCAL STAND-IN for registry.k8s.io/pause (hack/localcluster/pause)",
		BuildHint:   "CGO_ENABLED=0 go build -o bin/pause ./hack/localcluster/pause",
	}.Ensure(ctx)
}

// Failed returns why a process of the node exited, or nil.
func (n *RealNode) Failed() error {
	for _, c := range []*component{n.containerd, n.kubelet, n.kubeProxy, n.netpol} {
		if c != nil && !c.alive() {
			return c.failure()
		}
	}
	return nil
}

// Stop stops the kubelet, removes every pod sandbox through the CRI (the
// CNI plugins release addresses and rules), stops containerd, unmounts
// what is mounted under Dir, deletes the bridge and puts back the kernel
// settings the kubelet changed. Errors are reported to Log; Stop goes on.
func (n *RealNode) Stop() {
	if n == nil {
		return
	}
	o := n.o
	report := func(what string, err error) {
		if err != nil && o.Log != nil {
			fmt.Fprintf(o.Log, "real node %s: %s: %v\n", o.Name, what, err)
		}
	}
	n.kubelet.stop(10 * time.Second)
	if n.kubeProxy != nil {
		n.kubeProxy.stop(10 * time.Second)
		// Its chains (KUBE-SERVICES and the rest) go with --cleanup.
		if out, err := exec.Command(o.KubeProxy, "--cleanup", "--config="+o.path("kube-proxy.yaml")).CombinedOutput(); err != nil {
			report("kube-proxy --cleanup", fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out))))
		}
		if !n.hadKubeFirewall {
			for _, args := range [][]string{{"-D", "INPUT", "-j", "KUBE-FIREWALL"}, {"-D", "OUTPUT", "-j", "KUBE-FIREWALL"}, {"-F", "KUBE-FIREWALL"}, {"-X", "KUBE-FIREWALL"}} {
				_ = exec.Command("iptables", append([]string{"-t", "filter"}, args...)...).Run()
			}
		}
	}
	if n.netpol != nil {
		report("stopping kube-network-policies", n.stopNetworkPolicy())
	}
	n.gpus.stop()
	if n.containerd != nil && n.containerd.alive() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		report("removing pod sandboxes", n.removeSandboxes(ctx))
		cancel()
	}
	n.containerd.stop(10 * time.Second)
	report("unmounting", unmountUnder(o.Dir))
	if _, err := net.InterfaceByName(o.Bridge); err == nil {
		report("deleting bridge "+o.Bridge, exec.Command("ip", "link", "del", o.Bridge).Run())
	}
	if n.madeKubeletDir {
		report("removing /var/lib/kubelet", os.RemoveAll(filepath.Dir(devicePluginDir)))
	} else {
		_ = os.Remove(filepath.Join(devicePluginDir, "kubelet.sock"))
		_ = os.Remove(filepath.Join(devicePluginDir, "kubelet_internal_checkpoint"))
	}
	for s, v := range n.sysctls {
		report("restoring "+s, os.WriteFile("/proc/sys/"+s, []byte(v+"\n"), 0o644))
	}
}

// removeSandboxes stops and removes every pod sandbox of the node's
// containerd through the CRI, as the kubelet does when a pod goes.
func (n *RealNode) removeSandboxes(ctx context.Context) error {
	conn, err := grpc.NewClient("unix://"+n.o.socket(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("stop sandbox %s: %w", s.Metadata.GetName(), err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, fmt.Errorf("remove sandbox %s: %w", s.Metadata.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// unmountUnder lazily unmounts every mount point beneath dir, deepest first
// (containerd's snapshots, the kubelet's volume mounts).
func unmountUnder(dir string) error {
	// The kernel lists mount points by their real path: a state dir
	// reached through a symbolic link (a bin/ that links elsewhere) is
	// matched by its target.
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			points = append(points, fields[4])
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	var errs []error
	for _, p := range points {
		if err := exec.Command("umount", "-l", p).Run(); err != nil {
			errs = append(errs, fmt.Errorf("umount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// RealNodePrefix and RealNodeLabel name the local cluster's real nodes.
const (
	RealNodePrefix = "localcluster-real-"
	RealNodeLabel  = "repot.dev/real-node"
)

// DefaultGPUProduct is the nvidia.com/gpu.product label of the real nodes,
// whose GPUs are SIMULATED: what NVIDIA's GPU feature discovery puts on an
// H100 SXM node.
const DefaultGPUProduct = "NVIDIA-H100-80GB-HBM3"

func clusterDNS(ip string) string {
	if ip == "" {
		return ""
	}
	return fmt.Sprintf("clusterDNS: [%q]\n", ip)
}

// plainHTTPMirrors is the CRI configuration that sends pulls from these
// registries over plain HTTP.
func plainHTTPMirrors(hosts []string) string {
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "  [plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.%q]\n    endpoint = [%q]\n", h, "http://"+h)
	}
	return b.String()
}
