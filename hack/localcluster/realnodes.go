package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// startRealNodes starts o.realNodes real nodes and waits until each is
// Ready; they are stopped (and cleaned up) with the cluster.
func (lc *localCluster) startRealNodes(ctx context.Context, cs kubernetes.Interface, o upOptions, binDir string) error {
	if o.realNodes == 0 {
		return nil
	}
	if o.realNodes > 1 {
		return fmt.Errorf("--real-nodes %d: one real node per host for now (two kubelets would share the cgroup root and the node port)", o.realNodes)
	}
	pause, err := filepath.Abs(o.pause)
	if err != nil {
		return err
	}
	for i := range o.realNodes {
		name := fmt.Sprintf("%s%d", cluster.RealNodePrefix, i)
		t0 := time.Now()
		fmt.Fprintf(lc.log, "real node %s: starting containerd, importing %v, starting the kubelet...\n", name, o.nodeImages)
		n, err := cluster.StartRealNode(ctx, cluster.RealNodeOptions{
			Name: name, Dir: filepath.Join(lc.Layout.Dir, "real", name),
			Kubelet: filepath.Join(binDir, "kubelet"), PKI: lc.Layout.PKI(), Server: lc.cp.Server,
			PodCIDR: fmt.Sprintf("10.88.%d.0/24", i), Bridge: fmt.Sprintf("repot%d", i),
			Pause: pause, Images: o.nodeImages,
			GPUs:   o.realNodeGPUs,
			Labels: []string{cluster.RealNodeLabel + "=true", "nvidia.com/gpu.product=" + o.gpuProduct},
			Taints: []string{cluster.RealNodeTaint},
			Log:    lc.log,
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
