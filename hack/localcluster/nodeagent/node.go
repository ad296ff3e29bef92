package nodeagent

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	leaseNamespace   = "kube-node-lease"
	leaseDuration    = 40 // seconds, as the kubelet
	leaseRenewPeriod = 10 * time.Second
	statusPeriod     = 30 * time.Second
)

// nodeObject builds the Node for spec.
func nodeObject(spec NodeSpec) *corev1.Node {
	labels := map[string]string{
		corev1.LabelHostname:   spec.Name,
		corev1.LabelOSStable:   "linux",
		corev1.LabelArchStable: runtime.GOARCH,
		ProcessNodeLabel:       "true",
	}
	var taints []corev1.Taint
	if spec.GPUs > 0 {
		labels[GPUProductLabel] = spec.GPUProduct
		labels[GPUCountLabel] = strconv.FormatInt(spec.GPUs, 10)
		labels[GPUPresentLabel] = "true"
		if spec.Tainted {
			taints = append(taints, GPUTaint)
		}
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: labels},
		Spec:       corev1.NodeSpec{Taints: taints},
	}
}

// nodeStatus is the status a healthy process node reports.
func nodeStatus(spec NodeSpec, version string, now time.Time) corev1.NodeStatus {
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              spec.CPU,
		corev1.ResourceMemory:           spec.Memory,
		corev1.ResourcePods:             spec.Pods,
		corev1.ResourceEphemeralStorage: spec.Storage,
	}
	if spec.GPUs > 0 {
		capacity[GPUResource] = *resource.NewQuantity(spec.GPUs, resource.DecimalSI)
	}
	t := metav1.NewTime(now)
	cond := func(typ corev1.NodeConditionType, status corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: t, LastTransitionTime: t}
	}
	return corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity.DeepCopy(),
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "process node has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "process node has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "process node has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "process node of the repot local cluster is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: "127.0.0.1"},
			{Type: corev1.NodeHostName, Address: spec.Name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID:               spec.Name,
			KernelVersion:           "process-node",
			OSImage:                 "repot localcluster process node",
			ContainerRuntimeVersion: "process://repot",
			KubeletVersion:          version,
			OperatingSystem:         "linux",
			Architecture:            runtime.GOARCH,
		},
	}
}

// registerNode creates (or takes over) the Node and posts its status.
func (a *Agent) registerNode(ctx context.Context, spec NodeSpec) error {
	nodes := a.o.Client.CoreV1().Nodes()
	want := nodeObject(spec)
	n, err := nodes.Create(ctx, want, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		n, err = nodes.Get(ctx, spec.Name, metav1.GetOptions{})
		if err == nil {
			n.Labels = want.Labels
			n.Spec.Taints = mergeTaints(n.Spec.Taints, want.Spec.Taints, spec.Tainted)
			n, err = nodes.Update(ctx, n, metav1.UpdateOptions{})
		}
	}
	if err != nil {
		return fmt.Errorf("registering node %s: %w", spec.Name, err)
	}
	n.Status = nodeStatus(spec, a.o.KubeletVersion, a.o.Clock.Now())
	if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("posting status of node %s: %w", spec.Name, err)
	}
	return a.renewLease(ctx, spec.Name, n.UID)
}

// mergeTaints keeps taints others added (e.g. not-ready, set by the node
// lifecycle controller) and sets or removes the GPU taint.
func mergeTaints(have, want []corev1.Taint, gpu bool) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range have {
		if t.Key != GPUTaint.Key {
			out = append(out, t)
		}
	}
	if gpu {
		out = append(out, want...)
	}
	return out
}

// heartbeat renews the node's lease every 10s and its status every 30s
// until ctx ends.
func (a *Agent) heartbeat(ctx context.Context, spec NodeSpec) {
	lease := a.o.Clock.NewTicker(leaseRenewPeriod)
	defer lease.Stop()
	status := a.o.Clock.NewTicker(statusPeriod)
	defer status.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-lease.C():
			if err := a.renewLease(ctx, spec.Name, ""); err != nil && ctx.Err() == nil {
				a.logf("node %s: lease: %v", spec.Name, err)
			}
		case <-status.C():
			if err := a.postStatus(ctx, spec); err != nil && ctx.Err() == nil {
				a.logf("node %s: status: %v", spec.Name, err)
			}
		}
	}
}

func (a *Agent) postStatus(ctx context.Context, spec NodeSpec) error {
	nodes := a.o.Client.CoreV1().Nodes()
	n, err := nodes.Get(ctx, spec.Name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	fresh := nodeStatus(spec, a.o.KubeletVersion, a.o.Clock.Now())
	// Keep transition times of unchanged conditions.
	for i, c := range fresh.Conditions {
		for _, old := range n.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				fresh.Conditions[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	n.Status = fresh
	_, err = nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{})
	return err
}

// renewLease creates or renews the node's Lease in kube-node-lease.
func (a *Agent) renewLease(ctx context.Context, node string, uid types.UID) error {
	leases := a.o.Client.CoordinationV1().Leases(leaseNamespace)
	now := metav1.NewMicroTime(a.o.Clock.Now())
	l, err := leases.Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		l = &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: leaseNamespace},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(node),
				LeaseDurationSeconds: ptr.To[int32](leaseDuration),
				RenewTime:            &now,
			},
		}
		if uid != "" {
			l.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: node, UID: uid}}
		}
		_, err = leases.Create(ctx, l, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	l.Spec.HolderIdentity = ptr.To(node)
	l.Spec.LeaseDurationSeconds = ptr.To[int32](leaseDuration)
	l.Spec.RenewTime = &now
	_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
	return err
}
