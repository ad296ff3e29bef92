package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"repot.dev/repot-operator/hack/localcluster/cluster"
	"repot.dev/repot-operator/hack/localcluster/nodeagent"
)

func init() { register(newUpCommand) }

type upOptions struct {
	dir, binDir, repot, gpuProduct string
	nodes, taintedNodes, gpus      int
	images                         []string
	keepData                       bool
	readyTimeout                   time.Duration
	// kueue starts the Kueue manager (bin/kueue) once the cluster is ready.
	kueue bool
	// realNodes adds that many real nodes (kubelet, containerd, CNI; 0 or
	// 1 for now), whose pods run nodeImages.
	realNodes, realNodeGPUs int
	nodeImages              []string
	pause                   string
}

func newUpCommand() *cobra.Command {
	o := upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the control plane and the process nodes; runs until SIGINT or SIGTERM",
		Long: `Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
127.0.0.1 with certificates generated under DIR/pki (kept for later runs), registers
the process nodes and runs their pods. Writes DIR/kubeconfig, and DIR/ready once
the cluster accepts pods. Each start begins with an empty cluster unless --keep-data.

Process nodes advertise nvidia.com/gpu and the H100 product label. With two or more
nodes, node 0 also carries the GPU taint nvidia.com/gpu=present:NoSchedule (a
dedicated GPU node: only pods that tolerate it land there) and the others do not
(so the operator's runners and simulated servers find a node). Containers whose
image matches --image run as processes of the repot binary; other images wait
with reason ErrImagePull (ImageNotRunnableOnProcessNode).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", defaultDir, "state dir (certificates, etcd data, logs, kubeconfig, pod dirs)")
	f.StringVar(&o.binDir, "bin-dir", "bin", "dir with etcd, kube-apiserver, kube-controller-manager, kube-scheduler (hack/build-control-plane.sh all)")
	f.StringVar(&o.repot, "repot", "bin/repot", "the repot binary that stands in for the project's image")
	f.IntVar(&o.nodes, "nodes", 2, "number of process nodes")
	f.IntVar(&o.taintedNodes, "gpu-tainted-nodes", -1, "how many nodes (from node 0) carry the GPU taint; -1: node 0 when --nodes >= 2")
	f.IntVar(&o.gpus, "gpus", 8, "nvidia.com/gpu per node")
	f.StringVar(&o.gpuProduct, "gpu-product", nodeagent.DefaultGPUProduct, "value of the nvidia.com/gpu.product label")
	f.StringSliceVar(&o.images, "image", nodeagent.DefaultImagePatterns, "images the nodes run (repository name, or a glob over the whole reference)")
	f.BoolVar(&o.keepData, "keep-data", false, "keep etcd data from an earlier run")
	f.DurationVar(&o.readyTimeout, "ready-timeout", 3*time.Minute, "how long to wait for the cluster to become ready")
	f.IntVar(&o.realNodes, "real-nodes", 0, "also run this many real nodes (0 or 1): a kubelet (BIN-DIR/kubelet, hack/build-control-plane.sh node) with containerd, runc, the CNI plugins and kube-network-policies (BIN-DIR/kube-network-policies, hack/build-netpol.sh); needs root. Beside process nodes they carry the taint "+cluster.RealNodeTaint+", so only pods that tolerate it land there; with --nodes 0 everything runs on them")
	f.IntVar(&o.realNodeGPUs, "real-node-gpus", 2, "SIMULATED nvidia.com/gpu devices of each real node, through a device plugin")
	f.StringSliceVar(&o.nodeImages, "node-image", []string{"localhost/repot-operator:dev"}, "buildah images imported into the real nodes (make docker-build)")
	f.StringVar(&o.pause, "pause", "bin/pause", "the static pause binary of the real nodes' sandbox image (go build ./hack/localcluster/pause)")
	f.BoolVar(&o.kueue, "kueue", false, "also install Kueue's CRDs and run the Kueue manager (BIN-DIR/kueue, built by hack/build-kueue.sh)")
	return cmd
}

func runUp(parent context.Context, o upOptions) error {
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	lc, err := startCluster(ctx, o, os.Stdout)
	if err != nil {
		return err
	}
	defer lc.Stop()
	fmt.Printf("kubeconfig: %s\n  export KUBECONFIG=%s\n", lc.Layout.Kubeconfig(), lc.Layout.Kubeconfig())
	err = lc.Wait(ctx)
	if ctx.Err() != nil {
		fmt.Println("signal received, shutting down")
	}
	return err
}

// localCluster is a running control plane with its process nodes.
type localCluster struct {
	Layout    cluster.Layout
	cp        *cluster.ControlPlane
	stopAgent context.CancelFunc
	agentDone chan error
	cleanups  []func()
	log       io.Writer
	kueue     *cluster.Kueue
	realNodes []*cluster.RealNode
}

// startCluster starts the control plane and the node agent and waits until
// the cluster accepts pods. On error everything is stopped again.
func startCluster(ctx context.Context, o upOptions, log io.Writer) (lc *localCluster, err error) {
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return nil, err
	}
	binDir, err := filepath.Abs(o.binDir)
	if err != nil {
		return nil, err
	}
	repot, err := filepath.Abs(o.repot)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(repot); err != nil {
		fmt.Fprintf(log, "warning: %v: pods of the project's image will fail to start (go build -o bin/repot .)\n", err)
	}
	l := cluster.Layout{Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if pid, alive := runningPID(l); alive && pid != os.Getpid() {
		return nil, fmt.Errorf("a local cluster (pid %d) already runs with state dir %s; stop it with: localcluster down --dir %s", pid, dir, o.dir)
	}
	if err := os.WriteFile(l.PIDFile(), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return nil, err
	}
	lc = &localCluster{Layout: l, log: log}
	lc.cleanups = append(lc.cleanups, func() { os.Remove(l.PIDFile()) })
	// started, not lc: `return nil, err` sets lc to nil before this runs.
	started := lc
	defer func() {
		if err != nil {
			started.Stop()
		}
	}()
	_ = os.Remove(l.ReadyFile())
	if !o.keepData {
		if err := os.RemoveAll(l.Pods()); err != nil {
			return nil, err
		}
	}
	t0 := time.Now()
	var advertise net.IP
	if o.realNodes > 0 {
		if err := cluster.RealNodeRequirements(); err != nil {
			return nil, err
		}
		if err := makeRealNodeBridge(); err != nil {
			return nil, err
		}
		lc.cleanups = append(lc.cleanups, func() { _ = exec.Command("ip", "link", "del", realNodeBridge(0)).Run() })
		advertise = realNodeGateway(0)
	}
	cp, err := cluster.Start(ctx, cluster.Options{Dir: dir, BinDir: binDir, KeepData: o.keepData, Log: log, AdvertiseIP: advertise})
	if err != nil {
		return nil, err
	}
	lc.cp = cp
	lc.cleanups = append(lc.cleanups, func() {
		fmt.Fprintln(log, "stopping the control plane...")
		cp.Stop()
		fmt.Fprintln(log, "local cluster stopped")
	})
	cs, err := kubernetes.NewForConfig(cp.NodeAgent)
	if err != nil {
		return nil, err
	}
	nodes := nodeagent.DefaultNodes(o.nodes)
	for i := range nodes {
		nodes[i].GPUs = int64(o.gpus)
		nodes[i].GPUProduct = o.gpuProduct
		if o.taintedNodes >= 0 {
			nodes[i].Tainted = i < o.taintedNodes
		}
	}
	block, releaseBlock, err := cluster.AcquireIPBlock()
	if err != nil {
		return nil, err
	}
	lc.cleanups = append(lc.cleanups, releaseBlock)
	agent := nodeagent.New(nodeagent.Options{
		IPBlock: block,
		Client:  cs, Nodes: nodes, PodsDir: l.Pods(), RepotBinary: repot,
		Images:    nodeagent.ImageMatcher{Patterns: o.images},
		APIServer: cp.Server, APIHost: cp.Host, APIPort: cp.Port, CAFile: cp.Layout.PKI().Path(cluster.CACert),
		KubeletVersion: kubeVersion(binDir), Log: log,
	})
	agentCtx, stopAgent := context.WithCancel(context.Background())
	lc.stopAgent, lc.agentDone = stopAgent, make(chan error, 1)
	go func() { lc.agentDone <- agent.Run(agentCtx) }()
	lc.cleanups = append(lc.cleanups, func() {
		fmt.Fprintln(log, "stopping pods...")
		stopAgent()
		err := <-lc.agentDone
		lc.agentDone <- err
	})
	select {
	case <-agent.Ready():
	case err := <-lc.agentDone:
		lc.agentDone <- err
		return nil, fmt.Errorf("node agent: %w", err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if err := waitClusterReady(ctx, cs, cp, nodes, o.readyTimeout); err != nil {
		return nil, err
	}
	if err := lc.startRealNodes(ctx, cs, o, binDir); err != nil {
		return nil, err
	}
	if o.kueue {
		k, err := cp.StartKueue(ctx, cluster.KueueOptions{Bin: filepath.Join(binDir, "kueue"), Log: log})
		if err != nil {
			return nil, err
		}
		lc.kueue = k
		lc.cleanups = append(lc.cleanups, k.Stop)
	}
	if err := os.WriteFile(l.ReadyFile(), []byte(l.Kubeconfig()+"\n"), 0o644); err != nil {
		return nil, err
	}
	lc.cleanups = append(lc.cleanups, func() { os.Remove(l.ReadyFile()) })
	fmt.Fprintf(log, "local cluster ready in %v: %d real node(s), %d process nodes (pod IPs 127.%d.0.0/16), API server %s\n", time.Since(t0).Round(100*time.Millisecond), len(lc.realNodes), len(nodes), block, cp.Server)
	return lc, nil
}

// Wait blocks until ctx ends (nil) or a component fails (its error).
func (lc *localCluster) Wait(ctx context.Context) error {
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-lc.agentDone:
			lc.agentDone <- err
			return fmt.Errorf("node agent stopped: %v", err)
		case <-tick.C:
			if err := lc.cp.Failed(); err != nil {
				return err
			}
			for _, n := range lc.realNodes {
				if err := n.Failed(); err != nil {
					return err
				}
			}
			if err := lc.kueue.Failed(); err != nil {
				return err
			}
		}
	}
}

// Stop stops the pods, then the control plane.
func (lc *localCluster) Stop() {
	for i := len(lc.cleanups) - 1; i >= 0; i-- {
		lc.cleanups[i]()
	}
	lc.cleanups = nil
}

// waitClusterReady waits until every node is Ready without the not-ready
// taint, and kube-controller-manager has created the default service account
// and published kube-root-ca.crt (so pods can be admitted and get tokens).
func waitClusterReady(ctx context.Context, cs kubernetes.Interface, cp *cluster.ControlPlane, nodes []nodeagent.NodeSpec, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var why string
	for {
		why = clusterNotReady(ctx, cs, nodes)
		if why == "" {
			return nil
		}
		if err := cp.Failed(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ready after %v: %s (logs in %s)", timeout, why, cp.Layout.Logs())
		}
		select {
		case <-ctx.Done():
			return errors.New("interrupted while waiting for the cluster")
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func clusterNotReady(ctx context.Context, cs kubernetes.Interface, nodes []nodeagent.NodeSpec) string {
	for _, n := range nodes {
		node, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return err.Error()
		}
		for _, t := range node.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
				return "node " + n.Name + " still has taint " + t.Key
			}
		}
	}
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return "service account default/default: " + err.Error()
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
		return "configmap default/kube-root-ca.crt: " + err.Error()
	}
	return ""
}

// kubeVersion reads the version hack/build-control-plane.sh recorded.
func kubeVersion(binDir string) string {
	data, err := os.ReadFile(filepath.Join(binDir, ".versions"))
	if err == nil {
		var name, v string
		for _, line := range splitLines(string(data)) {
			if _, err := fmt.Sscan(line, &name, &v); err == nil && name == "kube-apiserver" {
				return v
			}
		}
	}
	return "v0.0.0-localcluster"
}
