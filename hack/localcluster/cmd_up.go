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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"repot.dev/repot-operator/hack/localcluster/cluster"
)

func init() { register(newUpCommand) }

type upOptions struct {
	dir, binDir, gpuProduct string
	// nodes is how many nodes to run (0 or 1): a kubelet with containerd,
	// runc, the CNI plugins, kube-proxy and kube-network-policies each.
	nodes, gpus  int
	keepData     bool
	readyTimeout time.Duration
	// kueue starts the Kueue manager (bin/kueue) once the cluster is ready;
	// kueueWaitForPodsReady, above zero, turns on its waitForPodsReady
	// with that timeout, as GPU pools configure it.
	kueue                 bool
	kueueWaitForPodsReady time.Duration
	// nodeImages are imported into the nodes and pushed to the local
	// registry; pause is the static binary of their sandbox image.
	nodeImages []string
	pause      string
	// artifactStore runs the S3 store (bin/versitygw) on the real node.
	artifactStore bool
}

func newUpCommand() *cobra.Command {
	o := upOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start the control plane and a real node; runs until SIGINT or SIGTERM",
		Long: `Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler on
127.0.0.1 with certificates generated under DIR/pki (kept for later runs), then a
real node: a kubelet with containerd, runc, the CNI bridge plugin, kube-proxy
and kube-network-policies (NetworkPolicy enforced), CoreDNS as the cluster DNS,
an S3 artifact store (Versity's gateway; --artifact-store=false for none) and a
local registry with the project's image in it. The node's nvidia.com/gpu
devices are SIMULATED, served by a device plugin; the node carries the H100
product label. Writes DIR/kubeconfig, and DIR/ready once the cluster accepts
pods. Each start begins with an empty cluster unless --keep-data.

A real node needs root on Linux with containerd, runc, buildah, iptables, nft and
the CNI plugins (localcluster real-node-check says what is missing). With
--nodes 0 only the control plane runs (no root needed): manifests are validated
and stored, but no pod runs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUp(cmd.Context(), o) },
	}
	addUpFlags(cmd, &o)
	return cmd
}

// addUpFlags adds the flags of `localcluster up`, which `localcluster demo`
// shares.
func addUpFlags(cmd *cobra.Command, o *upOptions) {
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", defaultDir, "state dir (certificates, etcd data, logs, kubeconfig, the node's containerd)")
	f.StringVar(&o.binDir, "bin-dir", "bin", "dir with the control plane, the kubelet, kube-proxy, CoreDNS and kube-network-policies (make localcluster-bins realnode-bins)")
	f.IntVar(&o.nodes, "nodes", 1, "real nodes to run (0 or 1; root): 0 runs the control plane only")
	f.IntVar(&o.gpus, "gpus", 2, "SIMULATED nvidia.com/gpu devices of the node, through a device plugin")
	f.StringVar(&o.gpuProduct, "gpu-product", cluster.DefaultGPUProduct, "value of the node's nvidia.com/gpu.product label")
	f.BoolVar(&o.keepData, "keep-data", false, "keep etcd data from an earlier run")
	f.DurationVar(&o.readyTimeout, "ready-timeout", 3*time.Minute, "how long to wait for the cluster to become ready")
	f.StringSliceVar(&o.nodeImages, "node-image", []string{"localhost/repot-operator:dev"}, "buildah images imported into the node and pushed to the local registry; the first is the operator's (make docker-build)")
	f.StringVar(&o.pause, "pause", "bin/pause", "the static pause binary of the node's sandbox image (go build ./hack/localcluster/pause)")
	f.BoolVar(&o.artifactStore, "artifact-store", true, "with a real node, also run an S3 artifact store on it (BIN-DIR/versitygw, built by hack/build-cluster-bins.sh s3): Service "+cluster.ArtifactStoreEndpoint+", bucket "+cluster.ArtifactStoreBucket+", credentials in Secret "+cluster.ArtifactStoreNamespace+"/"+cluster.ArtifactStoreSecret+", objects under DIR/artifacts")
	f.BoolVar(&o.kueue, "kueue", false, "also install Kueue's CRDs and run the Kueue manager (BIN-DIR/kueue, built by hack/build-cluster-bins.sh kueue)")
	f.DurationVar(&o.kueueWaitForPodsReady, "kueue-wait-for-pods-ready", 0, "with --kueue, turn on Kueue's waitForPodsReady with this timeout (and the same recovery timeout): an admitted Workload whose pods are not all ready within it is evicted; 0 leaves it off")
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

// localCluster is a running control plane with its real node.
type localCluster struct {
	Layout    cluster.Layout
	cp        *cluster.ControlPlane
	cleanups  []func()
	log       io.Writer
	kueue     *cluster.Kueue
	realNodes []*cluster.RealNode
}

// startCluster starts the control plane and the real node and waits until
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
	if o.nodes < 0 || o.nodes > 1 {
		return nil, fmt.Errorf("--nodes %d: 0 or 1 (one real node per host: two kubelets would share the device-plugin socket, the cgroup root and the node ports)", o.nodes)
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
	t0 := time.Now()
	var advertise net.IP
	if o.nodes > 0 {
		if err := cluster.RealNodeRequirements(); err != nil {
			return nil, fmt.Errorf("%w\n(--nodes 0 runs the control plane alone, without root)", err)
		}
		killed, err := lockRealNodeHost(dir)
		if err != nil {
			return nil, err
		}
		if err := cleanStaleRealNode(log, binDir, killed); err != nil {
			return nil, err
		}
		if err := makeRealNodeBridge(); err != nil {
			return nil, err
		}
		// Runs last (cleanups run in reverse): the node and its parts are
		// stopped and removed, so the host is as it was.
		lc.cleanups = append(lc.cleanups, func() {
			_ = exec.Command("ip", "link", "del", realNodeBridge(0)).Run()
			markRealNodeClean()
		})
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
	cs, err := kubernetes.NewForConfig(cp.Admin)
	if err != nil {
		return nil, err
	}
	if err := waitClusterReady(ctx, cs, cp, o.readyTimeout); err != nil {
		return nil, err
	}
	if err := lc.startRealNodes(ctx, cs, o, binDir); err != nil {
		return nil, err
	}
	if o.kueue {
		k, err := cp.StartKueue(ctx, cluster.KueueOptions{Bin: filepath.Join(binDir, "kueue"), Log: log, WaitForPodsReady: o.kueueWaitForPodsReady})
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
	fmt.Fprintf(log, "local cluster ready in %v: %d real node(s), API server %s\n", time.Since(t0).Round(100*time.Millisecond), len(lc.realNodes), cp.Server)
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

// Stop stops the node (its pods with it), then the control plane.
func (lc *localCluster) Stop() {
	for i := len(lc.cleanups) - 1; i >= 0; i-- {
		lc.cleanups[i]()
	}
	lc.cleanups = nil
}

// waitClusterReady waits until kube-controller-manager has created the
// default service account and published kube-root-ca.crt (so pods can be
// admitted and get tokens).
func waitClusterReady(ctx context.Context, cs kubernetes.Interface, cp *cluster.ControlPlane, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var why string
	for {
		why = clusterNotReady(ctx, cs)
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

func clusterNotReady(ctx context.Context, cs kubernetes.Interface) string {
	if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		return "service account default/default: " + err.Error()
	}
	if _, err := cs.CoreV1().ConfigMaps("default").Get(ctx, "kube-root-ca.crt", metav1.GetOptions{}); err != nil {
		return "configmap default/kube-root-ca.crt: " + err.Error()
	}
	return ""
}
