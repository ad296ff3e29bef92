//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers"

	"repot.dev/repot-operator/hack/localcluster/proc"
)

// child is a process the tests started (the local cluster, the operator, a
// reference simulated server), in its own process group and killed if the
// test binary dies.
type child struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
	err    error
}

func startChild(name, logPath string, env []string, argv ...string) *child {
	Expect(os.MkdirAll(filepath.Dir(logPath), 0o755)).To(Succeed())
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	Expect(err).NotTo(HaveOccurred())
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	Expect(proc.Start(cmd)).To(Succeed(), "starting %s", name)
	c := &child{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		f.Close()
		close(c.exited)
	}()
	return c
}

func (c *child) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// stop terminates the process group gracefully (SIGKILL after grace).
func (c *child) stop(grace time.Duration) {
	if c != nil && c.cmd.Process != nil {
		proc.Stop(c.cmd.Process.Pid, c.exited, grace)
	}
}

// kill sends SIGKILL to the process group and waits for the exit.
func (c *child) kill() {
	_ = proc.SignalGroup(c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.exited
}

func tailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// testCluster is the local cluster and the operator under test.
type testCluster struct {
	dir        string
	cluster    *child
	kubeconfig string
	c          client.Client
	cs         kubernetes.Interface
	logs       string
	// operatorKills is how many times the spec killed the operator's
	// container on purpose (killOperator): the restarts operatorAlive
	// expects.
	operatorKills int32
	// tenancy watches the good-tenant invariant (tenancy_test.go) from
	// the boot to stop.
	tenancy *tenancyWatch
}

// operatorNamespace is where the chart installs the operator.
const operatorNamespace = "repot-system"

// startRealCluster starts a local cluster whose pods all run on a real node
// (localcluster up --nodes 1: a kubelet with containerd, runc, the bridge
// CNI, CoreDNS and kube-network-policies; SIMULATED GPUs through a device
// plugin) with state dir realDir(name) and the further `localcluster up`
// flags clusterArgs, and installs the operator from the chart as a
// Deployment of the image built from the Dockerfile, as users install it.
// Without root the spec is skipped: a real node needs it.
func startRealCluster(name string, clusterArgs ...string) *testCluster {
	tc := bootRealCluster(name, clusterArgs...)
	tc.installOperator(filepath.Join(rootDir, "charts/repot-operator"))
	return tc
}

// bootRealCluster is startRealCluster without the operator.
func bootRealCluster(name string, clusterArgs ...string) *testCluster {
	if os.Geteuid() != 0 {
		Skip("a real node needs root (containerd, the kubelet, the CNI plugins): run make e2e as root")
	}
	for _, b := range []string{"kubelet", "kube-proxy", "coredns", "kube-network-policies", "pause"} {
		_, err := os.Stat(filepath.Join(binDir, b))
		Expect(err).NotTo(HaveOccurred(), "make e2e builds bin/%s (make realnode-bins)", b)
	}
	dir := realDir(name)
	tc := &testCluster{dir: dir, logs: filepath.Join(dir, "test-logs")}
	Expect(os.MkdirAll(tc.logs, 0o755)).To(Succeed())
	tc.cluster = startChild("localcluster", filepath.Join(tc.logs, "localcluster.log"), nil,
		append([]string{filepath.Join(binDir, "localcluster"), "up", "--dir", dir, "--bin-dir", binDir,
			"--nodes", "1", "--pause", filepath.Join(binDir, "pause")}, clusterArgs...)...)
	ready := filepath.Join(dir, "ready")
	Eventually(func() error {
		if !tc.cluster.alive() {
			StopTrying("local cluster exited:\n" + tailFile(tc.cluster.log, 30)).Now()
		}
		_, err := os.Stat(ready)
		return err
	}).WithTimeout(4 * time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
	tc.kubeconfig = filepath.Join(dir, "kubeconfig")
	cfg, err := clientcmd.BuildConfigFromFlags("", tc.kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	cfg.QPS, cfg.Burst = 50, 100
	scheme, err := controllers.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	tc.c, err = client.New(cfg, client.Options{Scheme: scheme})
	Expect(err).NotTo(HaveOccurred())
	tc.cs, err = kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	tc.sharedPool()
	tc.watchTenancy()
	return tc
}

// Tenant namespaces of every cluster the specs start, as a shared GPU pool
// gives teams theirs (tenantNamespace: Pod Security restricted enforced, a
// LimitRange, a ResourceQuota on GPUs, cpu, memory and pods): ns, where
// the specs run, with a quota larger than the node (GPUs and pods a spec
// may ask for beyond the node's must meet the scheduler, not the quota), and
// otherTeam, with no GPU quota, where the quota specs run.
const (
	poolGPUQuota = 8
	otherTeam    = "team-a"
)

// sharedPool makes the cluster's namespaces a shared pool's: ns (which
// exists, as "default") and otherTeam become tenant namespaces.
func (tc *testCluster) sharedPool() {
	tc.kubectl(append([]string{"label", "--overwrite", "namespace", ns}, restrictedLabels()...)...)
	tc.tenantLimits(ns, poolGPUQuota)
	tc.tenantNamespace(otherTeam, 0)
}

// operatorRelease is the chart's Helm release.
const operatorRelease = "repot-operator"

// installOperator installs the operator as the docs say: the namespace made
// to enforce the restricted Pod Security Standard (kubectl), then `helm
// install` of the chart with the image built from the Dockerfile. Extra
// helm flags (--skip-crds) follow the chart.
func (tc *testCluster) installOperator(chart string, helmArgs ...string) {
	tc.kubectl("create", "namespace", operatorNamespace)
	tc.kubectl("label", "namespace", operatorNamespace, "pod-security.kubernetes.io/enforce=restricted")
	tc.helm(append([]string{"install", operatorRelease, chart, "--namespace", operatorNamespace,
		"--set-string", "image.repository=localhost/repot-operator", "--set-string", "image.tag=dev",
		// The specs put evaluations in namespaces of their own; the chart's
		// default install watches only the operator's namespace.
		"--set", "clusterWide=true"}, helmArgs...)...)
}

// smallRunner is what the real-node specs' runners request: a quarter of a
// core (the default is one, and the real node has the host's two), so that
// two shards run side by side.
func smallRunner() *repotv1.ResourceRequirements {
	return &repotv1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("512Mi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("2Gi")},
	}
}

// smallRunnerYAML is smallRunner() as a RepotEvaluation's spec.runner
// resources, for the YAML manifests of the specs.
const smallRunnerYAML = `    resources:
      requests: {cpu: 250m, memory: 512Mi}
      limits: {memory: 2Gi}
`

// realDir is the state dir of startRealCluster(name).
func realDir(name string) string {
	return filepath.Join(filepath.Dir(stateDir), filepath.Base(stateDir)+"-"+name)
}

// operatorFailure says how the operator's pod failed, or "": a container
// restarted more often than the spec killed it (killOperator). A slow API
// server is no failure.
func (tc *testCluster) operatorFailure() string {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	pods, err := tc.cs.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=repot-operator"})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if c.RestartCount > tc.operatorKills {
				return fmt.Sprintf("the operator's pod %s restarted %d times (killed %d times by the spec): %+v", p.Name, c.RestartCount, tc.operatorKills, c.LastTerminationState)
			}
		}
	}
	return ""
}

// operatorAlive fails the spec at once, inside Eventually too, when the
// operator's pod restarted on its own.
func (tc *testCluster) operatorAlive() {
	if f := tc.operatorFailure(); f != "" {
		StopTrying(f).Now()
	}
}

// killOperator sends SIGKILL to the operator's running container through
// containerd (ctr task kill), as the kernel's OOM killer or a node failure
// would: no graceful shutdown, no lease released. The kubelet restarts it.
func (tc *testCluster) killOperator() {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	pods, err := tc.cs.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=repot-operator"})
	Expect(err).NotTo(HaveOccurred())
	var id string
	for _, p := range pods.Items {
		for _, c := range p.Status.ContainerStatuses {
			if c.State.Running != nil && p.DeletionTimestamp == nil {
				id = strings.TrimPrefix(c.ContainerID, "containerd://")
			}
		}
	}
	Expect(id).NotTo(BeEmpty(), "no running operator container: %+v", pods.Items)
	socks, _ := filepath.Glob(filepath.Join(tc.dir, "real", "*", "containerd.sock"))
	Expect(socks).To(HaveLen(1), "the real node's containerd socket under %s", tc.dir)
	out, err := exec.Command("ctr", "-a", socks[0], "-n", "k8s.io", "task", "kill", "--signal", "SIGKILL", id).CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "ctr task kill: %s", out)
	tc.operatorKills++
}

// localcluster runs a bin/localcluster subcommand against the cluster.
func (tc *testCluster) localcluster(args ...string) string {
	return tc.tool("localcluster", args...)
}

// kubectl runs bin/kubectl against the cluster, as a user would.
func (tc *testCluster) kubectl(args ...string) string { return tc.tool("kubectl", args...) }

// helm runs bin/helm against the cluster, as a user would.
func (tc *testCluster) helm(args ...string) string { return tc.tool("helm", args...) }

// tool runs bin/NAME ARGS with KUBECONFIG pointing at the cluster, logs the
// command and its output to the spec's log, and fails the spec when it
// fails.
func (tc *testCluster) tool(name string, args ...string) string {
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+tc.kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	GinkgoWriter.Printf("$ %s %s\n%s", name, strings.Join(args, " "), out.String())
	Expect(err).NotTo(HaveOccurred(), "%s %s:\n%s", name, strings.Join(args, " "), out.String())
	return out.String()
}

// stop checks the good-tenant invariant over the cluster's life (a
// violation fails the spec) and stops the cluster.
func (tc *testCluster) stop() {
	if tc == nil {
		return
	}
	defer func() {
		if tc.cluster != nil {
			tc.cluster.stop(60 * time.Second)
		}
	}()
	tc.checkTenancy()
}

// evaluation reads evaluation name of namespace ns; inside Eventually pass
// its Gomega, so that a slow API server means "try again".
func (tc *testCluster) evaluation(g Gomega, name string) *repotv1.RepotEvaluation {
	return tc.evaluationIn(g, ns, name)
}

// evaluationIn is evaluation in namespace.
func (tc *testCluster) evaluationIn(g Gomega, namespace, name string) *repotv1.RepotEvaluation {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	e := &repotv1.RepotEvaluation{}
	g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, e)).To(Succeed())
	return e
}

// awaitGone waits up to within for obj (its key) to be gone from the API
// server: deleted, its finalizers done.
func (tc *testCluster) awaitGone(obj client.Object, within time.Duration) {
	Eventually(func(g Gomega) {
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		err := tc.c.Get(ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "%s is still there: %v", obj.GetName(), err)
	}).WithTimeout(within).WithPolling(2 * time.Second).Should(Succeed())
}

// expectEvent fails the spec unless an event of reason was recorded for
// the object of UID uid in namespace.
func (tc *testCluster) expectEvent(namespace string, uid types.UID, reason string) {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	var evs corev1.EventList
	Expect(tc.c.List(ctx, &evs, client.InNamespace(namespace))).To(Succeed())
	for _, ev := range evs.Items {
		if ev.InvolvedObject.UID == uid && ev.Reason == reason {
			return
		}
	}
	Fail(fmt.Sprintf("no %s event for %s in %s", reason, uid, namespace))
}

// createEvaluation creates the RepotEvaluation of a YAML manifest in
// namespace ns.
func (tc *testCluster) createEvaluation(manifest string) { tc.createEvaluationIn(ns, manifest) }

// createEvaluationIn is createEvaluation in namespace.
func (tc *testCluster) createEvaluationIn(namespace, manifest string) {
	e := &repotv1.RepotEvaluation{}
	Expect(yaml.Unmarshal([]byte(manifest), e)).To(Succeed())
	e.Namespace = namespace
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	Expect(tc.c.Create(ctx, e)).To(Succeed())
}

// podLog returns the log of a container of a pod, read through the API
// server from the kubelet, or "" while there is none.
func (tc *testCluster) podLog(namespace, pod, container string) string {
	ctx, cancel := ctxTimeout(30 * time.Second)
	defer cancel()
	out, err := tc.cs.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Do(ctx).Raw()
	if err != nil {
		return ""
	}
	return string(out)
}

func ctxTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// awaitComplete waits up to timeout for evaluation name in ns to be
// Complete (failing the spec if the operator restarts on its own) and
// returns it.
func (tc *testCluster) awaitComplete(name string, timeout time.Duration) *repotv1.RepotEvaluation {
	e := &repotv1.RepotEvaluation{}
	Eventually(func(g Gomega) {
		tc.operatorAlive()
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, e)).To(Succeed())
		g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "progress %v", e.Status.Progress)
	}).WithTimeout(timeout).WithPolling(5 * time.Second).Should(Succeed())
	return e
}
