package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/hack/localcluster/nodeagent"
	"repot.dev/repot-operator/hack/localcluster/proc"
)

func init() { register(newDemoCommand) }

type demoOptions struct {
	up                  upOptions
	samples, crds, ns   string
	timeout, stallAfter time.Duration
	keep                bool
	report              string
}

func newDemoCommand() *cobra.Command {
	o := demoOptions{up: upOptions{taintedNodes: -1, readyTimeout: 3 * time.Minute}}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the local cluster, install the CRDs, run the operator, apply the simulated samples, show progress and results, stop",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.Context(), o, os.Stdout) },
	}
	f := cmd.Flags()
	f.StringVar(&o.up.dir, "dir", defaultDir, "state dir of the local cluster")
	f.StringVar(&o.up.binDir, "bin-dir", "bin", "dir with the control-plane binaries")
	f.StringVar(&o.up.repot, "repot", "bin/repot", "the repot binary (operator, runners, simulated servers)")
	f.IntVar(&o.up.nodes, "nodes", 2, "number of process nodes")
	f.IntVar(&o.up.gpus, "gpus", 8, "nvidia.com/gpu per node")
	f.StringVar(&o.up.gpuProduct, "gpu-product", nodeagent.DefaultGPUProduct, "GPU product label")
	f.StringSliceVar(&o.up.images, "image", nodeagent.DefaultImagePatterns, "images the nodes run")
	f.StringVar(&o.samples, "samples", "config/samples", "samples dir (or file); the RepotEvaluations whose models are all simulated are applied")
	f.StringVar(&o.crds, "crds", "config/crd/bases", "CRD manifests")
	f.StringVarP(&o.ns, "namespace", "n", "default", "namespace of the evaluations")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long")
	f.DurationVar(&o.stallAfter, "stalled-timeout", 3*time.Minute, "give up once an evaluation has been Stalled this long")
	f.BoolVar(&o.keep, "keep-running", false, "keep the cluster and operator running after the demo (until Ctrl-C)")
	f.StringVar(&o.report, "report", "", "HTML report to write at the end (default DIR/demo-report.html; \"-\" for none)")
	return cmd
}

func runDemo(parent context.Context, o demoOptions, out io.Writer) error {
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	t0 := time.Now()
	l, err := layoutOf(o.up.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(l.Logs(), 0o755); err != nil {
		return err
	}
	clusterLog, err := os.Create(filepath.Join(l.Logs(), "localcluster.log"))
	if err != nil {
		return err
	}
	defer clusterLog.Close()
	step := func(format string, args ...any) {
		fmt.Fprintf(out, "[%5.1fs] %s\n", time.Since(t0).Seconds(), fmt.Sprintf(format, args...))
	}
	step("starting the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, %d process nodes); log: %s", o.up.nodes, clusterLog.Name())
	lc, err := startCluster(ctx, o.up, clusterLog)
	if err != nil {
		return err
	}
	defer func() {
		step("stopping the local cluster")
		lc.Stop()
		step("done")
	}()
	step("cluster ready; kubeconfig %s", l.Kubeconfig())
	cf := clientFlags{kubeconfig: l.Kubeconfig(), namespace: o.ns}
	cfg, dyn, mapper, disc, err := cf.clients()
	if err != nil {
		return err
	}
	crds, err := readManifests([]string{o.crds})
	if err != nil {
		return fmt.Errorf("CRDs: %w", err)
	}
	if err := applyAll(ctx, dyn, mapper, crds, o.ns, io.Discard); err != nil {
		return err
	}
	step("installed %d CRD(s) from %s", len(crds), o.crds)
	op, err := startOperator(o.up.repot, l.Kubeconfig(), filepath.Join(l.Logs(), "operator.log"))
	if err != nil {
		return err
	}
	defer func() {
		step("stopping the operator")
		op.stop()
	}()
	step("operator running: %s manager (pid %d); log: %s", o.up.repot, op.pid, op.log)
	samples, err := simulatedSamples(o.samples)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("no RepotEvaluation with only simulated models in %s", o.samples)
	}
	mapper.Reset()
	if err := applyAll(ctx, dyn, mapper, samples, o.ns, io.Discard); err != nil {
		return err
	}
	var names []string
	for _, s := range samples {
		names = append(names, s.GetName())
	}
	step("applied RepotEvaluation %s from %s", strings.Join(names, ", "), o.samples)

	deadline := time.Now().Add(o.timeout)
	shown := map[string]shownProgress{}
	stalledSince := map[string]time.Time{}
	for {
		if err := op.failed(); err != nil {
			return err
		}
		evals, err := listEvaluations(ctx, dyn, o.ns)
		if err != nil && ctx.Err() == nil {
			step("listing evaluations: %v", err)
		}
		done := len(evals) > 0
		for _, e := range evals {
			if next, show := shown[e.Name].next(e, time.Now()); show {
				step("%s", progressLine(e))
				shown[e.Name] = next
			}
			fin, state := evaluationDone(e)
			if state == "Stalled" {
				if stalledSince[e.Name].IsZero() {
					stalledSince[e.Name] = time.Now()
				}
				fin = time.Since(stalledSince[e.Name]) > o.stallAfter
			} else {
				delete(stalledSince, e.Name)
			}
			done = done && fin
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			step("timed out after %v", o.timeout)
			break
		}
		select {
		case <-ctx.Done():
			step("interrupted")
			return nil
		case <-time.After(2 * time.Second):
		}
	}
	fmt.Fprintln(out)
	if err := printGet(ctx, cfg, mapper, disc, l.Kubeconfig(), o.ns, out); err != nil {
		return err
	}
	evals, err := listEvaluations(ctx, dyn, o.ns)
	if err != nil {
		return err
	}
	for _, e := range evals {
		printReport(out, e)
	}
	fmt.Fprintln(out)
	if o.report != "-" {
		path, err := writeDemoReport(ctx, o, l.Kubeconfig(), names)
		if err != nil {
			return err
		}
		step("report of %s: %s (open it in a browser; it loads nothing from the network)", strings.Join(names, ", "), path)
	}
	step("demo finished in %v", time.Since(t0).Round(time.Second))
	if o.keep {
		step("cluster and operator keep running; export KUBECONFIG=%s; Ctrl-C to stop", l.Kubeconfig())
		return lc.Wait(ctx)
	}
	return nil
}

// progressLine is one line of progress for an evaluation.
func progressLine(ev *repotv1.RepotEvaluation) string {
	s := ev.Status
	var b strings.Builder
	b.WriteString(ev.Name + ":")
	if s.Summary != nil {
		if s.Summary.State != "" {
			fmt.Fprintf(&b, " %s", s.Summary.State)
		}
		if s.Summary.Servers != "" {
			fmt.Fprintf(&b, ", servers %s", s.Summary.Servers)
		}
	}
	if s.Progress != nil && s.Progress.RunsTotal > 0 {
		fmt.Fprintf(&b, ", runs %d/%d (%d%%)", s.Progress.RunsDone, s.Progress.RunsTotal, 100*s.Progress.RunsDone/s.Progress.RunsTotal)
	}
	if s.Summary != nil && (s.Summary.PoT != "" || s.Summary.RePoT != "") {
		fmt.Fprintf(&b, ", pot %s, repot %s, adaptive %s", dash(s.Summary.PoT), dash(s.Summary.RePoT), dash(s.Summary.Adaptive))
	}
	if b.Len() == len(ev.Name)+1 {
		b.WriteString(" applied; waiting for the operator's first status")
	}
	for _, c := range s.Conditions {
		if c.Type == "Stalled" && c.Status == "True" {
			fmt.Fprintf(&b, " (stalled: %s)", c.Message)
		}
	}
	return b.String()
}

// simulatedSamples returns the RepotEvaluations of path whose models are all
// simulated (the ones that can run on the local cluster).
func simulatedSamples(path string) ([]*unstructured.Unstructured, error) {
	objs, err := readManifests([]string{path})
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, u := range objs {
		if u.GetKind() != "RepotEvaluation" {
			continue
		}
		models, _, _ := unstructured.NestedSlice(u.Object, "spec", "models")
		all := len(models) > 0
		for _, m := range models {
			mm, _ := m.(map[string]any)
			if _, ok := mm["simulated"]; !ok {
				all = false
			}
		}
		if all {
			out = append(out, u)
		}
	}
	return out, nil
}

// operator is the manager running as a local process.
type operator struct {
	cmd    *exec.Cmd
	pid    int
	log    string
	exited chan struct{}
	err    error
}

func startOperator(repot, kubeconfig, logPath string) (*operator, error) {
	abs, err := filepath.Abs(repot)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(abs, "manager", "--metrics-bind-address=0", "--health-probe-bind-address=0")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = f, f
	if err := proc.Start(cmd); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting the operator: %w", err)
	}
	op := &operator{cmd: cmd, pid: cmd.Process.Pid, log: logPath, exited: make(chan struct{})}
	go func() {
		op.err = cmd.Wait()
		f.Close()
		close(op.exited)
	}()
	return op, nil
}

func (op *operator) failed() error {
	select {
	case <-op.exited:
		return fmt.Errorf("the operator exited (%v); see %s", op.err, op.log)
	default:
		return nil
	}
}

func (op *operator) stop() { proc.Stop(op.pid, op.exited, 10*time.Second) }

// shownProgress is what the demo last printed about an evaluation: it prints
// a line when the state or the servers change, at every tenth of the runs,
// and otherwise at most every 15 seconds.
type shownProgress struct {
	state, servers string
	tenth          int32
	line           string
	at             time.Time
}

func (p shownProgress) next(e *repotv1.RepotEvaluation, now time.Time) (shownProgress, bool) {
	n := shownProgress{line: progressLine(e), at: now}
	if s := e.Status.Summary; s != nil {
		n.state, n.servers = string(s.State), s.Servers
	}
	if pr := e.Status.Progress; pr != nil && pr.RunsTotal > 0 {
		n.tenth = 10 * pr.RunsDone / pr.RunsTotal
	}
	show := p.at.IsZero() || n.state != p.state || n.servers != p.servers || n.tenth != p.tenth ||
		(n.line != p.line && now.Sub(p.at) >= 15*time.Second)
	if !show {
		return p, false
	}
	return n, true
}

// writeDemoReport runs `repot report` over the demo's evaluations and
// returns the absolute path of the page.
func writeDemoReport(ctx context.Context, o demoOptions, kubeconfig string, names []string) (string, error) {
	path := o.report
	if path == "" {
		path = filepath.Join(o.up.dir, "demo-report.html")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	repot, err := filepath.Abs(o.up.repot)
	if err != nil {
		return "", err
	}
	args := []string{"report", "--kubeconfig", kubeconfig, "-n", o.ns, "-o", path, "--title", "repot-operator demo (simulated models)"}
	for _, n := range names {
		args = append(args, "--evaluation", n)
	}
	cmd := exec.CommandContext(ctx, repot, args...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("repot report: %v: %s", err, b)
	}
	return path, nil
}
