package nodeagent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// startCtr starts container c as a local process.
func (w *worker) startCtr(ctx context.Context, c *ctrState, now time.Time) {
	env, argv, dir, err := w.processSpec(c.spec)
	if err != nil {
		var ae *argvError
		if errors.As(err, &ae) {
			// As a runtime that cannot exec the entrypoint: a failed start
			// that counts as a restart.
			w.recordStartError(c, now, err.Error())
			return
		}
		c.waitReason, c.waitMessage = "CreateContainerConfigError", err.Error()
		c.backoffUntil = now.Add(2 * time.Second)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		w.recordStartError(c, now, err.Error())
		return
	}
	argv = restrictArgv(w.pod, c.spec, w.a.o.RepotBinary, argv)
	p, err := startProcess(argv, env, dir, filepath.Join(w.dir, "logs", c.name+".log"), now)
	if err != nil {
		w.recordStartError(c, now, err.Error())
		return
	}
	if c.starts > 0 {
		c.prev = c.term
	}
	c.starts++
	c.gen++
	c.proc = p
	c.term = nil
	c.stopped = false
	c.ready = false
	c.started = c.spec.StartupProbe == nil
	c.waitReason, c.waitMessage = "", ""
	pctx, cancel := context.WithCancel(ctx)
	c.cancelProbes = cancel
	w.startProbes(pctx, c, env)
	gen := c.gen
	go func() {
		<-p.exited
		select {
		case w.events <- event{ctr: c.name, gen: gen, exit: p}:
		case <-w.done:
		}
	}()
	w.logf("container %s started: pid %d", c.name, p.pid)
}

func (w *worker) recordStartError(c *ctrState, now time.Time, msg string) {
	if c.starts > 0 {
		c.prev = c.term
	}
	c.starts++
	c.gen++
	c.proc = &process{started: now}
	c.onExit(&process{code: 128, started: now}, now, w.a.o.RestartBackoff, w.a.o.MaxRestartBackoff)
	c.term.Reason = "StartError"
	c.term.Message = msg
	if c.kind == kindInit {
		c.succeeded = false
	}
	w.logf("container %s could not start: %s", c.name, msg)
}

// processSpec resolves a container's environment, argv and working dir.
func (w *worker) processSpec(spec *corev1.Container) (env []string, argv []string, dir string, err error) {
	src := envSource{
		pod: w.pod, podIP: w.ip, hostIP: "127.0.0.1", node: w.node,
		configMap: w.a.configMapGetter(w.ns),
		secret:    w.a.secretGetter(w.ns),
	}
	podEnv, err := resolveEnv(src, spec)
	if err != nil {
		return nil, nil, "", err
	}
	mounts := map[string]string{}
	for _, m := range spec.VolumeMounts {
		mv := w.volumes[m.Name]
		if mv == nil {
			return nil, nil, "", errors.New("volume mount " + m.Name + ": no such volume")
		}
		mounts[m.MountPath] = filepath.Join(mv.Dir, m.SubPath)
	}
	pm := newPathMap(mounts)
	port := strconv.Itoa(w.a.o.APIPort)
	base := []envVar{
		{"PATH", os.Getenv("PATH")},
		{"HOME", filepath.Join(w.dir, "home")},
		{"TMPDIR", filepath.Join(w.dir, "tmp")},
		{"LANG", "C.UTF-8"},
		{"HOSTNAME", podHostname(w.pod)},
		{"KUBERNETES_SERVICE_HOST", w.a.o.APIHost},
		{"KUBERNETES_SERVICE_PORT", port},
		{"KUBERNETES_SERVICE_PORT_HTTPS", port},
		{"KUBERNETES_PORT", "tcp://" + w.a.o.APIHost + ":" + port},
		{"REPOT_HOSTS_FILE", w.hostsFile()},
	}
	kc, err := w.kubeconfigFor(spec)
	if err != nil {
		return nil, nil, "", err
	}
	if kc != "" {
		base = append(base, envVar{"KUBECONFIG", kc})
	}
	vars := map[string]string{}
	var order []string
	add := func(name, value string) {
		if _, ok := vars[name]; !ok {
			order = append(order, name)
		}
		vars[name] = value
	}
	for _, e := range base {
		add(e.Name, e.Value)
	}
	for _, e := range podEnv {
		add(e.Name, rewriteAddresses(pm.rewrite(e.Value), w.ip))
	}
	for _, k := range order {
		env = append(env, k+"="+vars[k])
	}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	argv, err = buildArgv(spec, w.a.o.RepotBinary, lookup, pm, w.ip)
	if err != nil {
		return nil, nil, "", err
	}
	dir = filepath.Join(w.dir, "home")
	if spec.WorkingDir != "" {
		dir = pm.rewrite(spec.WorkingDir)
		if dir == spec.WorkingDir {
			// A directory of the image that no volume provides: keep the
			// process inside the pod dir.
			dir = filepath.Join(w.dir, "workdir", spec.WorkingDir)
		}
	}
	return env, argv, dir, nil
}

func podHostname(p *corev1.Pod) string {
	if p.Spec.Hostname != "" {
		return p.Spec.Hostname
	}
	return p.Name
}
