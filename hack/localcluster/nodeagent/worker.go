package nodeagent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"repot.dev/repot-operator/hack/localcluster/cluster"
)

// worker runs one pod. All its state is owned by its goroutine; the agent
// hands it new versions of the pod through the mailbox, and processes and
// probes report through events.
type worker struct {
	a    *Agent
	node NodeSpec
	uid  types.UID
	ns   string
	name string

	mu     sync.Mutex
	latest *corev1.Pod
	gone   bool
	wake   chan struct{}
	events chan event
	done   chan struct{}

	pod     *corev1.Pod
	dir     string
	ip      string
	ctrs    []*ctrState // init containers (and sidecars) in order, then main containers
	volumes map[string]*mountedVolume

	startTime     time.Time
	prepared      bool
	blocked       bool // an image cannot run here: nothing starts
	retryPrepAt   time.Time
	initialized   bool
	phase         corev1.PodPhase
	terminal      bool
	terminating   bool
	termDeadline  time.Time
	stopSidecars  bool
	sidecarKillAt time.Time
	conds         map[corev1.PodConditionType]condState
	written       *corev1.PodStatus
}

type condState struct {
	status corev1.ConditionStatus
	since  metav1.Time
	reason string
}

// event is a process exit or a probe result.
type event struct {
	ctr   string
	gen   int
	exit  *process
	probe *probeResult
}

func newWorker(a *Agent, node NodeSpec, pod *corev1.Pod) *worker {
	w := &worker{
		a: a, node: node, uid: pod.UID, ns: pod.Namespace, name: pod.Name,
		latest: pod, wake: make(chan struct{}, 1), events: make(chan event, 64), done: make(chan struct{}),
		conds: map[corev1.PodConditionType]condState{},
	}
	w.pod = pod
	w.dir = filepath.Join(a.o.PodsDir, pod.Namespace, pod.Name+"-"+string(pod.UID)[:8])
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		k := kindInit
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			k = kindSidecar
		}
		w.ctrs = append(w.ctrs, &ctrState{name: c.Name, kind: k, spec: c})
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		w.ctrs = append(w.ctrs, &ctrState{name: c.Name, kind: kindMain, spec: c})
	}
	return w
}

// deliver hands the worker a newer version of its pod.
func (w *worker) deliver(pod *corev1.Pod) {
	w.mu.Lock()
	w.latest = pod
	w.mu.Unlock()
	w.poke()
}

// markGone tells the worker its pod object no longer exists.
func (w *worker) markGone() {
	w.mu.Lock()
	w.gone = true
	w.mu.Unlock()
	w.poke()
}

func (w *worker) poke() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *worker) logf(format string, args ...any) {
	w.a.logf("pod %s/%s: "+format, append([]any{w.ns, w.name}, args...)...)
}

// run is the worker's loop: level-triggered, it looks at what is and does
// the next thing, after every event and at least twice a second.
func (w *worker) run(ctx context.Context) {
	defer close(w.done)
	tick := w.a.o.Clock.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			w.shutdown()
			return
		case <-w.wake:
		case ev := <-w.events:
			w.handle(ev)
		case <-tick.C():
		}
		for drained := false; !drained; {
			select {
			case ev := <-w.events:
				w.handle(ev)
			default:
				drained = true
			}
		}
		w.mu.Lock()
		pod, gone := w.latest, w.gone
		w.mu.Unlock()
		w.pod = pod
		if w.step(ctx, gone) {
			w.cleanup()
			return
		}
		w.flush(ctx, gone)
	}
}

func (w *worker) now() time.Time { return w.a.o.Clock.Now() }

func (w *worker) ctr(name string) *ctrState {
	for _, c := range w.ctrs {
		if c.name == name {
			return c
		}
	}
	return nil
}

func (w *worker) handle(ev event) {
	c := w.ctr(ev.ctr)
	if c == nil || ev.gen != c.gen {
		return // stale: from an earlier run of the container
	}
	switch {
	case ev.exit != nil:
		if c.proc != ev.exit {
			return
		}
		c.onExit(ev.exit, w.now(), w.a.o.RestartBackoff, w.a.o.MaxRestartBackoff)
		if c.kind == kindInit && c.term.ExitCode == 0 {
			c.succeeded = true
		}
		w.logf("container %s exited with code %d", c.name, c.term.ExitCode)
	case ev.probe != nil:
		if !c.running() {
			return
		}
		r := ev.probe
		switch r.kind {
		case probeStartup:
			c.started = r.ok
		case probeReadiness:
			c.ready = r.ok
		case probeLiveness:
			if !r.ok && c.started && !c.stopped {
				w.logf("container %s failed its liveness probe (%s); restarting", c.name, r.msg)
				w.stopCtr(c, syscall.SIGTERM)
			}
		}
	}
}

// step advances the pod; it returns true once the pod is finished with (its
// object deleted and every process stopped).
func (w *worker) step(ctx context.Context, gone bool) bool {
	now := w.now()
	if w.startTime.IsZero() {
		w.startTime = now
	}
	if gone || w.pod.DeletionTimestamp != nil {
		return w.stepTerminating(ctx, gone, now)
	}
	if w.terminal {
		return false
	}
	if !w.prepared {
		if !w.prepare(ctx, now) {
			return false
		}
	}
	w.refreshTokens(ctx, now)
	if !w.initialized && !w.stepInit(ctx, now) {
		return false
	}
	w.stepMain(ctx, now)
	return false
}

// prepare checks images, allocates the pod IP and writes the volumes.
func (w *worker) prepare(ctx context.Context, now time.Time) bool {
	if w.blocked || now.Before(w.retryPrepAt) {
		return false
	}
	blocked := false
	for _, c := range w.ctrs {
		if !w.a.o.Images.Runnable(c.spec.Image) {
			blocked = true
			c.waitReason = "ErrImagePull"
			c.waitMessage = fmt.Sprintf("ImageNotRunnableOnProcessNode: image %q is not the project's image; the local cluster's process nodes run only images matching %v", c.spec.Image, w.a.o.Images.Patterns)
		}
	}
	if blocked {
		w.blocked = true
		for _, c := range w.ctrs {
			if c.waitReason == "" {
				c.waitReason = "ContainerCreating"
			}
		}
		w.logf("cannot run: an image is not the project's image")
		w.a.event(ctx, w.pod, corev1.EventTypeWarning, "Failed", w.ctrs[0].waitMessage)
		return false
	}
	if w.ip == "" {
		ip, err := w.a.ips.Allocate()
		if err != nil {
			w.setWaiting("ContainerCreating", err.Error())
			w.retryPrepAt = now.Add(5 * time.Second)
			return false
		}
		w.ip = ip
	}
	for _, d := range []string{"home", "tmp", "logs"} {
		if err := os.MkdirAll(filepath.Join(w.dir, d), 0o755); err != nil {
			w.setWaiting("ContainerCreating", err.Error())
			w.retryPrepAt = now.Add(5 * time.Second)
			return false
		}
	}
	vw := w.volumeWriter(now)
	vols, err := vw.materialise(ctx, w.dir)
	if err != nil {
		w.setWaiting("ContainerCreating", "MountVolume failed: "+err.Error())
		w.a.event(ctx, w.pod, corev1.EventTypeWarning, "FailedMount", err.Error())
		w.retryPrepAt = now.Add(2 * time.Second)
		return false
	}
	w.volumes = vols
	w.a.hosts.register(w.uid, hostsTarget{ns: w.ns, name: w.name, hostname: podHostname(w.pod), ip: w.ip, path: w.hostsFile()})
	w.setWaiting("", "")
	w.prepared = true
	w.logf("on %s with IP %s, dir %s", w.node.Name, w.ip, w.dir)
	return true
}

func (w *worker) volumeWriter(now time.Time) volumeWriter {
	return volumeWriter{client: w.a.o.Client, pod: w.pod, podIP: w.ip, hostIP: "127.0.0.1", node: w.node, now: now}
}

func (w *worker) hostsFile() string { return filepath.Join(w.dir, "hosts") }

func (w *worker) setWaiting(reason, msg string) {
	for _, c := range w.ctrs {
		if c.proc == nil && c.term == nil {
			c.waitReason, c.waitMessage = reason, msg
		}
	}
}

// refreshTokens requests service-account tokens again at 80% of their life.
func (w *worker) refreshTokens(ctx context.Context, now time.Time) {
	for i := range w.pod.Spec.Volumes {
		v := &w.pod.Spec.Volumes[i]
		mv := w.volumes[v.Name]
		if mv == nil || mv.Token == "" || now.Before(mv.RefreshAt) {
			continue
		}
		fresh, err := w.volumeWriter(now).volume(ctx, w.dir, v)
		if err != nil {
			w.logf("refreshing token volume %s: %v", v.Name, err)
			mv.RefreshAt = now.Add(10 * time.Second)
			continue
		}
		w.volumes[v.Name] = fresh
	}
}

// stepInit runs init containers in order and starts sidecars; it returns
// true once all regular init containers have succeeded.
func (w *worker) stepInit(ctx context.Context, now time.Time) bool {
	for _, c := range w.ctrs {
		switch c.kind {
		case kindMain:
			continue
		case kindSidecar:
			if !c.running() {
				if c.starts > 0 && now.Before(c.backoffUntil) {
					return false
				}
				w.startCtr(ctx, c, now)
				return false
			}
			if !c.started {
				return false // its startup probe gates the next container
			}
		case kindInit:
			if c.succeeded {
				continue
			}
			if c.running() {
				return false
			}
			if c.term != nil {
				if w.pod.Spec.RestartPolicy == corev1.RestartPolicyNever {
					w.finish(now, corev1.PodFailed)
					return false
				}
				if now.Before(c.backoffUntil) {
					return false
				}
			}
			w.startCtr(ctx, c, now)
			return false
		}
	}
	w.initialized = true
	return true
}

// stepMain starts and restarts main containers and sidecars, and finishes
// the pod once every main container is done.
func (w *worker) stepMain(ctx context.Context, now time.Time) {
	allDone := true
	for _, c := range w.ctrs {
		if c.kind != kindMain {
			continue
		}
		if c.running() {
			allDone = false
			continue
		}
		if c.term == nil || w.shouldRestart(c) {
			allDone = false
			if c.term == nil || !now.Before(c.backoffUntil) {
				w.startCtr(ctx, c, now)
			}
		}
	}
	if !allDone {
		for _, c := range w.ctrs {
			if c.kind == kindSidecar && !c.running() && !now.Before(c.backoffUntil) {
				w.startCtr(ctx, c, now)
			}
		}
		return
	}
	phase := corev1.PodSucceeded
	for _, c := range w.ctrs {
		if c.kind == kindMain && c.exitedCode() != 0 {
			phase = corev1.PodFailed
		}
	}
	w.finish(now, phase)
}

// finish stops the sidecars (in reverse order), then records the terminal
// phase.
func (w *worker) finish(now time.Time, phase corev1.PodPhase) {
	if w.stopRunning(now) {
		return
	}
	w.phase = phase
	w.terminal = true
	w.a.hosts.unregister(w.uid)
	w.logf("finished: %s", phase)
}

func (w *worker) shouldRestart(c *ctrState) bool {
	switch w.pod.Spec.RestartPolicy {
	case corev1.RestartPolicyNever:
		return false
	case corev1.RestartPolicyOnFailure:
		return c.exitedCode() != 0
	}
	return true
}

// kubeconfigFor writes a kubeconfig for a container that mounts a
// service-account token, and returns its path ("" if the container mounts
// none).
func (w *worker) kubeconfigFor(c *corev1.Container) (string, error) {
	for _, m := range c.VolumeMounts {
		mv := w.volumes[m.Name]
		if mv == nil || mv.Token == "" || m.SubPath != "" {
			continue
		}
		ca := mv.CA
		if ca == "" {
			ca = w.a.o.CAFile
		}
		path := filepath.Join(w.dir, "kubeconfigs", c.Name+".kubeconfig")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", err
		}
		return path, cluster.WriteTokenKubeconfig(path, w.a.o.APIServer, ca, mv.Token, w.ns)
	}
	return "", nil
}
