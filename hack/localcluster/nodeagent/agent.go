package nodeagent

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// Agent runs the process nodes.
type Agent struct {
	o     Options
	nodes map[string]NodeSpec
	ips   *IPAllocator
	hosts *hostsManager

	mu      sync.Mutex
	workers map[types.UID]*worker
	wg      sync.WaitGroup
	runCtx  context.Context

	podLister corelisters.PodLister
	svcLister corelisters.ServiceLister
	ready     chan struct{}
	logMu     sync.Mutex

	imageIDOnce  sync.Once
	imageIDValue string
}

// New returns an agent for o.Nodes.
func New(o Options) *Agent {
	o.defaults()
	a := &Agent{o: o, nodes: map[string]NodeSpec{}, ips: NewIPAllocator(o.IPBlock), workers: map[types.UID]*worker{}, ready: make(chan struct{})}
	for _, n := range o.Nodes {
		a.nodes[n.Name] = n
	}
	return a
}

// Ready is closed once the nodes are registered and pods are being watched.
func (a *Agent) Ready() <-chan struct{} { return a.ready }

func (a *Agent) logf(format string, args ...any) {
	a.logMu.Lock()
	defer a.logMu.Unlock()
	fmt.Fprintf(a.o.Log, "%s node-agent: %s\n", a.o.Clock.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// Run registers the nodes and runs their pods until ctx ends; then it stops
// every pod's processes and returns.
func (a *Agent) Run(ctx context.Context) error {
	go a.imageID() // hash the host binary (~0.7s for 130 MB) before the first pod status needs it
	for _, n := range a.o.Nodes {
		if err := retryUntil(ctx, func() error { return a.registerNode(ctx, n) }); err != nil {
			return err
		}
		go a.heartbeat(ctx, n)
	}
	factory := informers.NewSharedInformerFactory(a.o.Client, 10*time.Minute)
	podInf := factory.Core().V1().Pods()
	svcInf := factory.Core().V1().Services()
	a.podLister, a.svcLister = podInf.Lister(), svcInf.Lister()
	a.hosts = newHostsManager(
		func() []*corev1.Service { s, _ := a.svcLister.List(labels.Everything()); return s },
		func() []*corev1.Pod { p, _ := a.podLister.List(labels.Everything()); return p },
		a.logf)
	a.runCtx = ctx
	_, _ = podInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { a.onPod(obj) },
		UpdateFunc: func(_, obj any) { a.onPod(obj) },
		DeleteFunc: func(obj any) { a.onPodDelete(obj) },
	})
	_, _ = svcInf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { a.hosts.changed() },
		UpdateFunc: func(any, any) { a.hosts.changed() },
		DeleteFunc: func(any) { a.hosts.changed() },
	})
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("node agent: cache of %v did not sync", typ)
		}
	}
	go a.hosts.run(ctx.Done())
	close(a.ready)
	<-ctx.Done()
	factory.Shutdown()
	a.wg.Wait()
	return nil
}

func (a *Agent) onPod(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.hosts.changed()
	node, mine := a.nodes[pod.Spec.NodeName]
	if !mine {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w, ok := a.workers[pod.UID]; ok {
		w.deliver(pod)
		return
	}
	if a.runCtx.Err() != nil {
		return
	}
	if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		if pod.DeletionTimestamp != nil {
			// Nothing runs; finish the deletion as the kubelet would.
			go a.forceDelete(pod)
		}
		return
	}
	w := newWorker(a, node, pod)
	a.workers[pod.UID] = w
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		w.run(a.runCtx)
		a.mu.Lock()
		delete(a.workers, pod.UID)
		a.mu.Unlock()
	}()
}

func (a *Agent) onPodDelete(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	a.hosts.changed()
	a.mu.Lock()
	w := a.workers[pod.UID]
	a.mu.Unlock()
	if w != nil {
		w.markGone()
	}
}

func (a *Agent) forceDelete(pod *corev1.Pod) {
	uid := pod.UID
	_ = a.o.Client.CoreV1().Pods(pod.Namespace).Delete(a.runCtx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &uid}})
}

func (a *Agent) configMapGetter(ns string) func(string) (*corev1.ConfigMap, error) {
	return func(name string) (*corev1.ConfigMap, error) {
		return a.o.Client.CoreV1().ConfigMaps(ns).Get(a.runCtx, name, metav1.GetOptions{})
	}
}

func (a *Agent) secretGetter(ns string) func(string) (*corev1.Secret, error) {
	return func(name string) (*corev1.Secret, error) {
		return a.o.Client.CoreV1().Secrets(ns).Get(a.runCtx, name, metav1.GetOptions{})
	}
}

// event records a Kubernetes event about pod from the node.
func (a *Agent) event(ctx context.Context, pod *corev1.Pod, typ, reason, msg string) {
	now := metav1.NewTime(a.o.Clock.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: pod.Name + ".", Namespace: pod.Namespace},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: pod.Namespace,
			Name: pod.Name, UID: pod.UID, ResourceVersion: pod.ResourceVersion},
		Type: typ, Reason: reason, Message: msg,
		Source:         corev1.EventSource{Component: "localcluster-node-agent", Host: pod.Spec.NodeName},
		FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	if _, err := a.o.Client.CoreV1().Events(pod.Namespace).Create(ctx, ev, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
		a.logf("event for %s/%s: %v", pod.Namespace, pod.Name, err)
	}
}

// retryUntil calls f every second until it succeeds or ctx ends.
func retryUntil(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(time.Second):
		}
	}
}
