package nodeagent

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type probeKind string

const (
	probeStartup   probeKind = "startup"
	probeReadiness probeKind = "readiness"
	probeLiveness  probeKind = "liveness"
)

type probeResult struct {
	kind probeKind
	ok   bool
	msg  string
}

// startProbes runs the container's probes until ctx ends, reporting each
// change of a probe's result to the worker.
func (w *worker) startProbes(ctx context.Context, c *ctrState, env []string) {
	p := prober{podIP: w.ip, ctr: c.spec, env: env, repot: w.a.o.RepotBinary, dir: w.dir}
	for _, pr := range []struct {
		kind  probeKind
		probe *corev1.Probe
	}{{probeStartup, c.spec.StartupProbe}, {probeReadiness, c.spec.ReadinessProbe}, {probeLiveness, c.spec.LivenessProbe}} {
		if pr.probe == nil {
			continue
		}
		go w.runProbe(ctx, c.name, c.gen, pr.kind, pr.probe, p)
	}
}

func (w *worker) runProbe(ctx context.Context, ctr string, gen int, kind probeKind, pb *corev1.Probe, p prober) {
	clk := w.a.o.Clock
	period := secondsOr(pb.PeriodSeconds, 10)
	timeout := secondsOr(pb.TimeoutSeconds, 1)
	succ, fail := intOr(pb.SuccessThreshold, 1), intOr(pb.FailureThreshold, 3)
	if d := time.Duration(pb.InitialDelaySeconds) * time.Second; d > 0 {
		select {
		case <-ctx.Done():
			return
		case <-clk.After(d):
		}
	}
	var okRun, failRun int
	reported := -1 // -1 unknown, 0 failing, 1 passing
	for {
		ok, msg := p.once(ctx, pb, timeout)
		if ctx.Err() != nil {
			return
		}
		if ok {
			okRun, failRun = okRun+1, 0
		} else {
			okRun, failRun = 0, failRun+1
		}
		state := reported
		if okRun >= succ {
			state = 1
		} else if failRun >= fail || (kind == probeReadiness && reported == -1 && !ok) {
			state = 0
		}
		if state != reported {
			reported = state
			select {
			case w.events <- event{ctr: ctr, gen: gen, probe: &probeResult{kind: kind, ok: state == 1, msg: msg}}:
			case <-ctx.Done():
				return
			}
			if kind == probeStartup && state == 1 {
				return // a startup probe stops once it has passed
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-clk.After(period):
		}
	}
}

func secondsOr(v int32, def int32) time.Duration {
	if v <= 0 {
		v = def
	}
	return time.Duration(v) * time.Second
}

func intOr(v int32, def int) int {
	if v <= 0 {
		return def
	}
	return int(v)
}

// prober executes one probe against a pod on a process node.
type prober struct {
	podIP string
	ctr   *corev1.Container
	env   []string
	repot string
	dir   string
}

func (p prober) once(ctx context.Context, pb *corev1.Probe, timeout time.Duration) (bool, string) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch {
	case pb.HTTPGet != nil:
		return p.httpGet(ctx, pb.HTTPGet)
	case pb.TCPSocket != nil:
		host, err := p.host(pb.TCPSocket.Host)
		if err != nil {
			return false, err.Error()
		}
		port, err := p.port(pb.TCPSocket.Port)
		if err != nil {
			return false, err.Error()
		}
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	case pb.Exec != nil:
		if len(pb.Exec.Command) == 0 {
			return false, "exec probe without a command"
		}
		argv := append([]string(nil), pb.Exec.Command...)
		if filepath.Base(argv[0]) == "repot" {
			argv[0] = p.repot
		}
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Env = p.env
		cmd.Dir = filepath.Join(p.dir, "home")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return false, fmt.Sprintf("%v: %s", err, strings.TrimSpace(string(out)))
		}
		return true, ""
	case pb.GRPC != nil:
		return false, "gRPC probes are not supported on process nodes"
	}
	return false, "probe has no handler"
}

func (p prober) httpGet(ctx context.Context, g *corev1.HTTPGetAction) (bool, string) {
	host, err := p.host(g.Host)
	if err != nil {
		return false, err.Error()
	}
	port, err := p.port(g.Port)
	if err != nil {
		return false, err.Error()
	}
	scheme := "http"
	if g.Scheme == corev1.URISchemeHTTPS {
		scheme = "https"
	}
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(host, strconv.Itoa(port)), path), nil)
	if err != nil {
		return false, err.Error()
	}
	for _, h := range g.HTTPHeaders {
		req.Header.Add(h.Name, h.Value)
	}
	req.Header.Set("User-Agent", "kube-probe/localcluster")
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true, Proxy: nil}
	resp, err := (&http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		return false, err.Error()
	}
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return true, ""
	}
	return false, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode)
}

// host is the probe's target: the pod IP unless the probe names a host,
// which must be on loopback (nothing on the local cluster dials elsewhere).
func (p prober) host(h string) (string, error) {
	if h == "" || h == "localhost" {
		return p.podIP, nil
	}
	ip := net.ParseIP(h)
	if ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("probe host %q is not on 127.0.0.0/8; process nodes only dial loopback", h)
	}
	return h, nil
}

func (p prober) port(v intstr.IntOrString) (int, error) {
	if v.Type == intstr.Int {
		return v.IntValue(), nil
	}
	for _, cp := range p.ctr.Ports {
		if cp.Name == v.StrVal {
			return int(cp.ContainerPort), nil
		}
	}
	if n, err := strconv.Atoi(v.StrVal); err == nil {
		return n, nil
	}
	return 0, fmt.Errorf("container %s has no port named %q", p.ctr.Name, v.StrVal)
}
