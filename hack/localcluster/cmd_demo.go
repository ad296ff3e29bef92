package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/hack/localcluster/cluster"
)

func init() { register(newDemoCommand) }

type demoOptions struct {
	up                  upOptions
	samples, ns         string
	timeout, stallAfter time.Duration
	keep                bool
	report              string
	chart               string
	kubeconfig          string
	chartSets           []string
	// repot is the host's repot binary, which writes the report.
	repot string
}

// demoOperatorNamespace is where the demo installs the operator's chart
// when it runs on real nodes.
const demoOperatorNamespace = "repot-system"

func newDemoCommand() *cobra.Command {
	o := demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the local cluster, install the operator from the chart, apply the simulated samples, show progress and results, stop",
		Long: `Starts the local cluster (control plane and a real node: root on Linux), installs
the operator from its Helm chart as a Deployment of the project's image, applies the
RepotEvaluations of --samples whose models are all simulated, shows their progress,
prints the status tables and writes the HTML report; then stops everything.
With --kubeconfig it runs on that cluster instead (kind, minikube or a real one),
which must be able to pull the image of --node-image.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(cmd.Context(), o, os.Stdout) },
	}
	addUpFlags(cmd, &o.up)
	f := cmd.Flags()
	f.StringVar(&o.repot, "repot", "bin/repot", "the host's repot binary, which writes the report")
	f.StringVar(&o.samples, "samples", "config/samples/demo.yaml", "samples file; the RepotEvaluations whose models are all simulated are applied (kubectl apply)")
	f.StringVarP(&o.ns, "namespace", "n", "default", "namespace of the evaluations")
	f.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long")
	f.DurationVar(&o.stallAfter, "stalled-timeout", 3*time.Minute, "give up once an evaluation has been Stalled this long")
	f.BoolVar(&o.keep, "keep-running", false, "keep the cluster and operator running after the demo (until Ctrl-C)")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "run the demo on the cluster of this kubeconfig (kind, minikube or a real one) instead of a local cluster: the operator is installed from the chart with the image of --node-image, which that cluster must be able to pull")
	f.StringVar(&o.chart, "chart", "charts/repot-operator", "the operator's Helm chart")
	f.StringArrayVar(&o.chartSets, "set-string", nil, "a value for the chart, passed to helm's --set-string")
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
	// The real kubectl and helm do the user's steps: missing, say so first.
	tools := kubeTool{binDir: o.up.binDir, out: out}
	for _, name := range []string{"kubectl", "helm"} {
		if _, err := tools.path(name); err != nil {
			return err
		}
	}
	kubeconfig := o.kubeconfig
	var lc *localCluster
	if kubeconfig != "" {
		step("using the cluster of %s (no local cluster; the operator is installed from the chart)", kubeconfig)
	} else {
		if o.up.nodes == 0 {
			return errors.New("the demo runs its pods on a node: --nodes 1 (root), or --kubeconfig for an existing cluster")
		}
		step("starting the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, a real node with containerd, CoreDNS, kube-network-policies and an S3 artifact store); log: %s", clusterLog.Name())
		lc, err = startCluster(ctx, o.up, clusterLog)
		if err != nil {
			return err
		}
		defer func() {
			step("stopping the local cluster")
			lc.Stop()
			step("done")
		}()
		kubeconfig = l.Kubeconfig()
		step("cluster ready; kubeconfig %s", kubeconfig)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	tools.kubeconfig = kubeconfig
	// The local cluster's artifact store is the operator's default store,
	// so the demo's traces outlive its runner pods; the operator looks the
	// credentials Secret up in the evaluation's namespace, so a copy goes
	// there. Someone else's cluster has its own store, or none.
	var store *cluster.ArtifactStore
	var storeValues []string
	if lc != nil && o.up.artifactStore {
		if store, err = cluster.LocalArtifactStore(ctx, cs); err != nil {
			return err
		}
		if err := store.ShareCredentials(ctx, cs, o.ns); err != nil {
			return err
		}
		storeValues = store.ChartValues()
		step("artifact store: s3://%s at %s (from this host: %s), the operator's default; credentials in Secret %s/%s", store.Location.Bucket, store.Location.Endpoint, store.HostEndpoint, o.ns, cluster.ArtifactStoreSecret)
	}
	// As users install it: with helm, into a namespace that enforces the
	// restricted Pod Security Standard; a Deployment of the image.
	if err := installOperator(ctx, tools, cs, o.chart, o.up.nodeImages[0], storeValues, o.chartSets); err != nil {
		return fmt.Errorf("installing the chart %s: %w", o.chart, err)
	}
	step("installed the operator from the chart %s into %s (image %s)", o.chart, demoOperatorNamespace, o.up.nodeImages[0])
	pod, err := waitOperatorPod(ctx, cs, o.up.readyTimeout)
	if err != nil {
		return err
	}
	step("operator running: pod %s/%s on node %s (%s)", pod.Namespace, pod.Name, pod.Spec.NodeName, pod.Status.ContainerStatuses[0].ContainerID)
	operatorFailed := func() error { return operatorPodFailed(ctx, cs) }
	samples, total, err := simulatedSamples(o.samples)
	if err != nil {
		return err
	}
	if len(samples) == 0 {
		return fmt.Errorf("no RepotEvaluation with only simulated models in %s", o.samples)
	}
	changed := len(samples) != total
	if o.kubeconfig != "" {
		if gpus, err := clusterGPUs(ctx, cs); err != nil {
			return err
		} else if gpus == 0 {
			for _, u := range samples {
				dropSimulatedGPUs(u)
			}
			changed = true
			step("no node of this cluster offers nvidia.com/gpu: the samples' simulated servers hold no GPU")
		}
	}
	if !changed {
		err = tools.run(ctx, nil, true, "kubectl", "apply", "-n", o.ns, "-f", o.samples)
	} else {
		// Only the simulated samples, as changed above: on stdin.
		var docs []string
		for _, u := range samples {
			b, err := yaml.Marshal(u.Object)
			if err != nil {
				return err
			}
			docs = append(docs, string(b))
		}
		err = tools.run(ctx, strings.NewReader(strings.Join(docs, "---\n")), true, "kubectl", "apply", "-n", o.ns, "-f", "-")
	}
	if err != nil {
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
		if err := operatorFailed(); err != nil {
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
	if err := tools.run(ctx, nil, true, "kubectl", "get", "reval", "-n", o.ns); err != nil {
		return err
	}
	evals, err := listEvaluations(ctx, dyn, o.ns)
	if err != nil {
		return err
	}
	for _, e := range evals {
		printReport(out, e)
	}
	if store != nil {
		// Read again: the store's pod, and its address, may have changed.
		if store, err = cluster.LocalArtifactStore(ctx, cs); err != nil {
			return err
		}
		repot, err := filepath.Abs(o.repot)
		if err != nil {
			return err
		}
		if err := storedTraces(ctx, out, dyn, store, repot, kubeconfig, o.ns, o.up.dir, names); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	if o.report != "-" {
		path, err := writeDemoReport(ctx, out, o, kubeconfig, store, names)
		if err != nil {
			return err
		}
		step("report of %s: %s (open it in a browser; it loads nothing from the network)", strings.Join(names, ", "), path)
	}
	step("demo finished in %v", time.Since(t0).Round(time.Second))
	if lc == nil {
		// Someone else's cluster: the demo's evaluations go (their
		// children with them, by owner references); the operator stays
		// installed, to run evaluations of your own or to uninstall.
		if o.keep {
			step("the evaluations and the operator stay on the cluster of %s", kubeconfig)
			return nil
		}
		if err := tools.run(ctx, nil, true, "kubectl", append([]string{"delete", "reval", "-n", o.ns, "--ignore-not-found"}, names...)...); err != nil {
			return err
		}
		step("the operator stays installed in %s (remove it with: helm uninstall %s -n %s; helm leaves the CRDs: kubectl delete -f %s/crds)", demoOperatorNamespace, demoRelease, demoOperatorNamespace, o.chart)
		return nil
	}
	if o.keep {
		step("cluster and operator keep running; export KUBECONFIG=%s; Ctrl-C to stop", kubeconfig)
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

// simulatedSamples returns the RepotEvaluations of the file path whose
// models are all simulated (the ones that can run on the local cluster),
// and how many objects the file holds.
func simulatedSamples(path string) ([]*unstructured.Unstructured, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	dec := k8syaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	total := 0
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return out, total, nil
		} else if err != nil {
			return nil, 0, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if len(m) == 0 {
			continue
		}
		total++
		u := &unstructured.Unstructured{Object: m}
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
}

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

// writeDemoReport runs `repot report` over the demo's evaluations, as a
// user would, prints what it says (how many failed runs it links to their
// traces) and returns the absolute path of the page. With the local
// cluster's store, the report reads the traces from it as `repot results
// export` does in storedTraces: at its pod's address, with its credentials.
func writeDemoReport(ctx context.Context, out io.Writer, o demoOptions, kubeconfig string, store *cluster.ArtifactStore, names []string) (string, error) {
	path := o.report
	if path == "" {
		path = filepath.Join(o.up.dir, "demo-report.html")
	}
	path, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	repot, err := filepath.Abs(o.repot)
	if err != nil {
		return "", err
	}
	args := []string{"report", "--kubeconfig", kubeconfig, "-n", o.ns, "-o", path, "--title", "repot-operator demo (simulated models)"}
	for _, n := range names {
		args = append(args, "--evaluation", n)
	}
	var creds artifacts.Credentials
	if store != nil {
		args = append(args, "--store-endpoint", store.HostEndpoint)
		creds = store.Creds
	}
	b, err := runRepot(ctx, repot, creds, args...)
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, b)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "report written to ") {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	return path, nil
}

// splitImage splits an image reference into repository and tag ("latest"
// when it has none; a registry's port is not a tag).
func splitImage(ref string) (repo, tag string) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || i < strings.LastIndex(ref, "/") {
		return ref, "latest"
	}
	return ref[:i], ref[i+1:]
}

// demoRelease is the operator's Helm release.
const demoRelease = "repot-operator"

// installOperator installs (or upgrades) the operator's release with helm,
// the image's repository and tag as values, into demoOperatorNamespace,
// made first (kubectl) to enforce the restricted Pod Security Standard.
// values are helm --set values; sets, the user's --set-string values,
// come last and win.
func installOperator(ctx context.Context, tools kubeTool, cs kubernetes.Interface, chart, img string, values, sets []string) error {
	if _, err := cs.CoreV1().Namespaces().Get(ctx, demoOperatorNamespace, metav1.GetOptions{}); apierrors.IsNotFound(err) {
		if err := tools.run(ctx, nil, true, "kubectl", "create", "namespace", demoOperatorNamespace); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if err := tools.run(ctx, nil, true, "kubectl", "label", "--overwrite", "namespace", demoOperatorNamespace, "pod-security.kubernetes.io/enforce=restricted"); err != nil {
		return err
	}
	repo, tag := splitImage(img)
	args := []string{"upgrade", "--install", demoRelease, chart, "--namespace", demoOperatorNamespace,
		"--set-string", "image.repository=" + repo, "--set-string", "image.tag=" + tag,
		// The demo's evaluation goes in the default namespace, the
		// operator in its own: the chart's default install watches only
		// the operator's namespace.
		"--set", "clusterWide=true"}
	for _, v := range values {
		args = append(args, "--set", v)
	}
	for _, s := range sets {
		args = append(args, "--set-string", s)
	}
	return tools.run(ctx, nil, false, "helm", args...)
}

// operatorPods selects the chart's manager pods.
const operatorPods = "app.kubernetes.io/name=repot-operator,app.kubernetes.io/component=manager"

// waitOperatorPod waits until a manager pod of the chart is Ready.
func waitOperatorPod(ctx context.Context, cs kubernetes.Interface, timeout time.Duration) (*corev1.Pod, error) {
	deadline := time.Now().Add(timeout)
	for {
		pods, err := cs.CoreV1().Pods(demoOperatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: operatorPods})
		if err == nil {
			for i := range pods.Items {
				p := &pods.Items[i]
				for _, c := range p.Status.Conditions {
					if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue && len(p.Status.ContainerStatuses) > 0 {
						return p, nil
					}
				}
			}
		}
		if err := operatorPodFailed(ctx, cs); err != nil {
			return nil, err
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the operator's pod in %s is not Ready after %v (kubectl get pods -n %s)", demoOperatorNamespace, timeout, demoOperatorNamespace)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// operatorPodFailed reports a manager pod that cannot run: its image cannot
// be pulled, or it crashes again and again.
func operatorPodFailed(ctx context.Context, cs kubernetes.Interface) error {
	pods, err := cs.CoreV1().Pods(demoOperatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: operatorPods})
	if err != nil {
		return nil // the API server is asked again on the next turn
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil && (w.Reason == "CrashLoopBackOff" || w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "ErrImageNeverPull") {
				return fmt.Errorf("the operator's pod %s/%s: %s: %s", p.Namespace, p.Name, w.Reason, w.Message)
			}
		}
	}
	return nil
}

// clusterGPUs is the nvidia.com/gpu the cluster's nodes can allocate.
func clusterGPUs(ctx context.Context, cs kubernetes.Interface) (int64, error) {
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing nodes: %w", err)
	}
	var n int64
	for _, node := range nodes.Items {
		if q, ok := node.Status.Allocatable["nvidia.com/gpu"]; ok {
			n += q.Value()
		}
	}
	return n, nil
}

// dropSimulatedGPUs removes spec.models[].simulated.gpus from a sample, so
// that its simulated servers run on a cluster without GPUs (their fakeGPU
// readings stay).
func dropSimulatedGPUs(u *unstructured.Unstructured) {
	models, ok, _ := unstructured.NestedSlice(u.Object, "spec", "models")
	if !ok {
		return
	}
	for _, m := range models {
		if mm, ok := m.(map[string]any); ok {
			if sim, ok := mm["simulated"].(map[string]any); ok {
				delete(sim, "gpus")
			}
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, models, "spec", "models")
}
