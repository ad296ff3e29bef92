//go:build e2e

package e2e

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	"repot.dev/repot-operator/controllers/build"
)

// The real node: a kubelet built from the module proxy with containerd,
// runc and the CNI plugins (localcluster up --nodes 1), running the image
// built from the Dockerfile (make docker-build). Its GPUs are SIMULATED,
// through a device plugin. It is the cluster's only node, so every pod
// lands there.
const (
	realNode       = "localcluster-real-0"
	realNodeLabel  = "repot.dev/real-node"
	realNS         = "realnode"
	projectImage   = "localhost/repot-operator:dev"
	unpullableVLLM = "127.0.0.1:1/no-such/vllm-openai:v0"
)

// restrictedPod is a pod of the project's image with the security contexts
// the operator gives its own pods (controllers/build: the restricted Pod
// Security Standard, which the namespace enforces: uid 65532, RuntimeDefault
// seccomp, no capabilities, no privilege escalation, a read-only root) and
// an emptyDir on /tmp.
func restrictedPod(name, script string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: realNS},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false),
			SecurityContext:              build.RestrictedPodSecurity(),
			Volumes:                      []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Containers: []corev1.Container{{
				Name: "c", Image: projectImage, ImagePullPolicy: corev1.PullIfNotPresent,
				Command:         []string{"sh", "-c", script},
				VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
				SecurityContext: build.RestrictedContainerSecurity(),
			}},
		},
	}
	return p
}

var _ = Describe("a real node: kubelet, containerd, CNI and the image we ship", Ordered, Label("realnode"), func() {
	var (
		tc               *testCluster
		dir              = realDir("realnode")
		sysctls          map[string]string
		chains           map[string][]string
		tables           []string
		hadVarLibKubelet bool
	)
	BeforeAll(func() {
		if os.Geteuid() != 0 {
			Skip("a real node needs root (containerd, the kubelet, the CNI plugins): run make e2e as root")
		}
		// What a killed cluster left (a lost CI session) goes first, so
		// that the snapshots below are of the host itself.
		out, err := exec.Command(filepath.Join(binDir, "localcluster"), "clean-stale", "--bin-dir", binDir).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "localcluster clean-stale: %s", out)
		sysctls = readSysctls()
		chains = iptablesChains()
		tables = nftTables()
		_, err = os.Stat("/var/lib/kubelet")
		hadVarLibKubelet = err == nil
		// The operator from the chart, as users install it: a Deployment
		// of the project's image (the image as the node has it, which the
		// chart also gives the runners and sidecars).
		tc = startRealCluster("realnode")
		DeferCleanup(func() { tc.stop() })
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		Expect(tc.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: realNS, Labels: map[string]string{
			"pod-security.kubernetes.io/enforce": "restricted",
		}}})).To(Succeed())
	})

	// finished waits for a pod to end and returns its log, read through the
	// API server from the kubelet.
	finished := func(name string) (*corev1.Pod, string) {
		var p corev1.Pod
		Eventually(func(g Gomega) {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: name}, &p)).To(Succeed())
			g.Expect(p.Status.Phase).To(BeElementOf(corev1.PodSucceeded, corev1.PodFailed), "pod %s: %+v", name, p.Status)
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		out, err := tc.cs.CoreV1().Pods(realNS).GetLogs(name, &corev1.PodLogOptions{Container: "c"}).Do(ctx).Raw()
		Expect(err).NotTo(HaveOccurred())
		return &p, string(out)
	}
	create := func(p *corev1.Pod) {
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		Expect(tc.c.Create(ctx, p)).To(Succeed())
	}

	It("runs the operator installed from the chart as a Deployment of the image, in containerd on the real node", func() {
		Eventually(func(g Gomega) {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			pods, err := tc.cs.CoreV1().Pods(operatorNamespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=repot-operator"})
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(pods.Items).To(HaveLen(1))
			p := pods.Items[0]
			g.Expect(p.Spec.NodeName).To(Equal(realNode))
			g.Expect(p.Spec.Containers[0].Image).To(Equal(projectImage))
			g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
			g.Expect(p.Status.ContainerStatuses[0].Ready).To(BeTrue())
			g.Expect(p.Status.ContainerStatuses[0].ContainerID).To(HavePrefix("containerd://"))
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
	})

	It("runs the project's image in containerd as a restricted runner pod, and the sandbox holds in it", func() {
		escape := `import os\nos.setpgid(0, os.getpgid(os.getppid()))\n`
		hanoi := `m = []\ndef h(n, a, b, c):\n    if n:\n        h(n - 1, a, c, b)\n        m.append((n, a, c))\n        h(n - 1, b, a, c)\nh(2, 0, 1, 2)\nprint("moves =", m)\n`
		create(restrictedPod("restricted", `id -u; grep -E "^(CapEff|Seccomp|NoNewPrivs):" /proc/self/status
touch /root-write 2>/dev/null && echo "root fs writable" || echo "root fs read-only"
python3 -c 'import sys; print("python %d.%d" % sys.version_info[:2])'
printf '`+escape+`' > /tmp/escape.py; printf '`+hanoi+`' > /tmp/hanoi.py
/usr/local/bin/repot sandbox run --timeout 5s /tmp/escape.py /tmp/hanoi.py`))
		p, log := finished("restricted")
		Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), log)
		Expect(p.Spec.NodeName).To(Equal(realNode))
		Expect(p.Status.ContainerStatuses[0].ContainerID).To(HavePrefix("containerd://"), "run by containerd")
		Expect(p.Status.PodIP).To(HavePrefix("10.88."), "an address from the bridge CNI")
		Expect(log).To(MatchRegexp(`(?m)^65532$`))
		Expect(log).To(MatchRegexp(`(?m)^CapEff:\s+0+$`), "no capabilities")
		Expect(log).To(MatchRegexp(`(?m)^Seccomp:\s+2$`), "a seccomp filter from the runtime (RuntimeDefault)")
		Expect(log).To(MatchRegexp(`(?m)^NoNewPrivs:\s+1$`))
		Expect(log).To(ContainSubstring("root fs read-only"))
		Expect(log).To(ContainSubstring("python 3.11"))
		Expect(log).To(MatchRegexp(`"file":"/tmp/escape.py","mode":"none, seccomp[^"]*","failure":"rejected: import of 'os' is not allowed"`))
		Expect(log).To(MatchRegexp(`"file":"/tmp/hanoi.py","mode":"[^"]*","failure":"","exit_code":0`))
	})

	It("reaches the API server through the kubernetes Service (kube-proxy) with its service-account token", func() {
		script := `python3 -c "
import os, ssl, json, urllib.request as u
d = '/var/run/secrets/kubernetes.io/serviceaccount/'
c = ssl.create_default_context(cafile=d + 'ca.crt')
r = u.Request('https://%s:%s/version' % (os.environ['KUBERNETES_SERVICE_HOST'], os.environ['KUBERNETES_SERVICE_PORT']),
              headers={'Authorization': 'Bearer ' + open(d + 'token').read()})
print('via', os.environ['KUBERNETES_SERVICE_HOST'], 'version', json.load(u.urlopen(r, context=c, timeout=10))['gitVersion'])
"`
		p := restrictedPod("apiserver", script)
		p.Spec.AutomountServiceAccountToken = ptr.To(true)
		create(p)
		p, log := finished("apiserver")
		Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), log)
		Expect(log).To(MatchRegexp(`via 10\.0\.0\.1 version v1\.\d+`), "the kubernetes Service's ClusterIP, TLS checked against the cluster CA")
	})

	It("resolves Service names through the cluster DNS and reaches a server pod behind its Service", func() {
		server := restrictedPod("sim", "exec /usr/local/bin/repot sim-server --listen :8000 --profile strong --seed 1")
		server.Labels = map[string]string{"app": "sim"}
		server.Spec.RestartPolicy = corev1.RestartPolicyAlways
		server.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8000)}}, PeriodSeconds: 1}
		create(server)
		ctx, cancel := ctxTimeout(30 * time.Second)
		Expect(tc.c.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "sim", Namespace: realNS},
			Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "sim"}, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8000)}}},
		})).To(Succeed())
		cancel()
		create(restrictedPod("client", `python3 -c "
import json, socket, time, urllib.request as u
print('kubernetes.default ->', socket.gethostbyname('kubernetes.default.svc.cluster.local'))
for i in range(60):
    try:
        r = json.load(u.urlopen('http://sim.realnode.svc/v1/models', timeout=5))
        print('sim.realnode.svc models', [m['id'] for m in r['data']])
        break
    except Exception as e:
        print('waiting for the server:', e)
        time.sleep(1)
"`))
		p, log := finished("client")
		Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), log)
		Expect(log).To(ContainSubstring("kubernetes.default -> 10.0.0.1"))
		Expect(log).To(MatchRegexp(`sim\.realnode\.svc models \[.+\]`), "the simulated server answered through its Service name")
	})

	It("pulls the image from the local registry with a pull secret, and is refused without one", func() {
		data, err := os.ReadFile(filepath.Join(dir, "registry.json"))
		Expect(err).NotTo(HaveOccurred())
		var reg struct {
			Host, User, Password string
			Images               []string
		}
		Expect(json.Unmarshal(data, &reg)).To(Succeed())
		Expect(reg.Images).NotTo(BeEmpty())
		ref := reg.Images[0]

		By("pulling without credentials: the registry answers 401 and the kubelet reports ErrImagePull")
		denied := restrictedPod("pull-denied", "true")
		denied.Spec.Containers[0].Image = ref
		create(denied)
		Eventually(func(g Gomega) {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var p corev1.Pod
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: "pull-denied"}, &p)).To(Succeed())
			g.Expect(p.Status.ContainerStatuses).To(HaveLen(1))
			w := p.Status.ContainerStatuses[0].State.Waiting
			g.Expect(w).NotTo(BeNil())
			g.Expect(w.Reason).To(BeElementOf("ErrImagePull", "ImagePullBackOff"))
			g.Expect(strings.ToLower(w.Message)).To(Or(ContainSubstring("401"), ContainSubstring("unauthorized")))
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())

		By("pulling with a kubernetes.io/dockerconfigjson pull secret")
		auth := base64.StdEncoding.EncodeToString([]byte(reg.User + ":" + reg.Password))
		cfg, err := json.Marshal(map[string]any{"auths": map[string]any{reg.Host: map[string]string{"username": reg.User, "password": reg.Password, "auth": auth}}})
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := ctxTimeout(30 * time.Second)
		Expect(tc.c.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "local-registry", Namespace: realNS},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: cfg},
		})).To(Succeed())
		cancel()
		allowed := restrictedPod("pull-allowed", "echo pulled from the registry")
		allowed.Spec.Containers[0].Image = ref
		allowed.Spec.ImagePullSecrets = []corev1.LocalObjectReference{{Name: "local-registry"}}
		create(allowed)
		p, log := finished("pull-allowed")
		Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), log)
		Expect(log).To(ContainSubstring("pulled from the registry"))
		Expect(p.Status.ContainerStatuses[0].ImageID).To(ContainSubstring("@sha256:"))
	})

	It("gives a pod its SIMULATED GPU through the device plugin", func() {
		var node corev1.Node
		ctx, cancel := ctxTimeout(30 * time.Second)
		Expect(tc.c.Get(ctx, client.ObjectKey{Name: realNode}, &node)).To(Succeed())
		cancel()
		Expect(node.Status.Allocatable).To(HaveKeyWithValue(corev1.ResourceName("nvidia.com/gpu"), resource.MustParse("2")))
		p := restrictedPod("gpu", `env | grep -E '^(NVIDIA_VISIBLE_DEVICES|REPOT_SIMULATED_GPUS)=' | sort`)
		p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}
		create(p)
		p, log := finished("gpu")
		Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), log)
		Expect(log).To(MatchRegexp(`(?m)^NVIDIA_VISIBLE_DEVICES=SIMULATED-GPU-` + realNode + `-[01]$`))
		Expect(log).To(ContainSubstring("REPOT_SIMULATED_GPUS=true"))
	})

	It("runs the gpu-telemetry wrapper as a container's entrypoint: the child's exit code, and the kubelet's SIGTERM through containerd, pass through it", func() {
		// What the operator runs in a vLLM container, with a shell in
		// place of vLLM. The wrapper is PID 1 of the container: a signal it
		// did not forward would be ignored (or end in SIGKILL after the
		// grace period), and the exit codes below could not come out.
		wrapped := func(name, script string) *corev1.Pod {
			p := restrictedPod(name, "")
			p.Spec.Containers[0].Command = []string{"/usr/local/bin/repot", "gpu-telemetry", "--exec", "--listen=:9400", "--", "sh", "-c", script}
			return p
		}
		create(wrapped("telemetry-exit", `echo child running; exit 7`))
		// activeDeadlineSeconds: the kubelet stops the container as it
		// stops any (SIGTERM through containerd, then SIGKILL after the
		// grace period of 30 s), and keeps the pod to read.
		term := wrapped("telemetry-term", `trap 'echo child got SIGTERM; exit 42' TERM; echo child running; while :; do sleep 1; done`)
		term.Spec.ActiveDeadlineSeconds = ptr.To[int64](15)
		create(term)

		p, log := finished("telemetry-exit")
		Expect(p.Status.ContainerStatuses[0].ContainerID).To(HavePrefix("containerd://"))
		Expect(log).To(ContainSubstring("child running"))
		Expect(p.Status.ContainerStatuses[0].State.Terminated).NotTo(BeNil())
		Expect(p.Status.ContainerStatuses[0].State.Terminated.ExitCode).To(BeEquivalentTo(7), "the child's exit code, through the wrapper and containerd")

		var (
			tp      corev1.Pod
			started time.Time
		)
		Eventually(func(g Gomega) {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: "telemetry-term"}, &tp)).To(Succeed())
			g.Expect(tp.Status.ContainerStatuses).NotTo(BeEmpty())
			st := tp.Status.ContainerStatuses[0].State
			g.Expect(st.Terminated).NotTo(BeNil(), "container state %+v", st)
			started = st.Terminated.StartedAt.Time
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		out := tc.podLog(realNS, "telemetry-term", "c")
		t := tp.Status.ContainerStatuses[0].State.Terminated
		GinkgoWriter.Printf("telemetry-term: exit %d after %v (%s); log:\n%s\n", t.ExitCode, t.FinishedAt.Sub(started), t.Reason, out)
		Expect(out).To(ContainSubstring("child got SIGTERM"), "the kubelet's SIGTERM reached the child through the wrapper")
		Expect(t.ExitCode).To(BeEquivalentTo(42), "the child's exit code on SIGTERM, not a SIGKILL's 137")
		Expect(t.FinishedAt.Sub(started)).To(BeNumerically("<", 40*time.Second), "ended by the forwarded SIGTERM, not the grace period's SIGKILL")
	})

	// ready waits for a pod to be Ready and returns its address.
	ready := func(name string) string {
		var p corev1.Pod
		Eventually(func(g Gomega) {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: name}, &p)).To(Succeed())
			g.Expect(p.Status.PodIP).NotTo(BeEmpty())
			g.Expect(p.Status.Conditions).To(ContainElement(And(
				HaveField("Type", corev1.PodReady), HaveField("Status", corev1.ConditionTrue))), "pod %s: %+v", name, p.Status)
		}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
		return p.Status.PodIP
	}

	It("enforces the operator's NetworkPolicies (kube-network-policies): a runner reaches its own server, the DNS and the API server and nothing else, and nothing outside reaches the server", func() {
		md := startMetadataStandIn(filepath.Join(dir, "e2e"))
		DeferCleanup(md.cleanup)

		// The policies the operator writes for evaluations np-a and np-b
		// (controllers/build), applied as they are.
		evals := map[string]*repotv1.RepotEvaluation{}
		for _, name := range []string{"np-a", "np-b"} {
			evals[name] = &repotv1.RepotEvaluation{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: realNS},
				Spec:       repotv1.RepotEvaluationSpec{Models: []repotv1.ModelSpec{{Name: "m", Simulated: &repotv1.SimulatedModel{}}}},
			}
		}
		// The API server's addresses as the operator reads them (the
		// kubernetes EndpointSlice): without them the runner policy has no
		// API server rule at all.
		var apiSlices discoveryv1.EndpointSliceList
		ctx, cancel := ctxTimeout(30 * time.Second)
		Expect(tc.c.List(ctx, &apiSlices, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelServiceName: "kubernetes"})).To(Succeed())
		cancel()
		opts := build.Options{}
		for _, sl := range apiSlices.Items {
			for _, ep := range sl.Endpoints {
				for _, a := range ep.Addresses {
					if strings.Contains(a, ":") {
						opts.APIServerCIDRs = append(opts.APIServerCIDRs, a+"/128")
					} else {
						opts.APIServerCIDRs = append(opts.APIServerCIDRs, a+"/32")
					}
				}
			}
		}
		Expect(opts.APIServerCIDRs).NotTo(BeEmpty())
		for _, np := range []*networkingv1.NetworkPolicy{
			build.RunnerNetworkPolicy(evals["np-a"], opts), build.ServerNetworkPolicy(evals["np-a"], opts), build.ServerNetworkPolicy(evals["np-b"], opts),
		} {
			np.OwnerReferences = nil
			ctx, cancel := ctxTimeout(30 * time.Second)
			Expect(tc.c.Create(ctx, np)).To(Succeed())
			cancel()
		}
		// Their server pods, an unrelated pod (each a simulated server on
		// the server port), and a Service for np-a's server.
		serve := func(name string, labels map[string]string) {
			p := restrictedPod(name, "exec /usr/local/bin/repot sim-server --listen :8000 --profile strong --seed 1")
			p.Labels = labels
			p.Spec.RestartPolicy = corev1.RestartPolicyAlways
			p.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(8000)}}, PeriodSeconds: 1}
			create(p)
		}
		serve("np-a-server", build.ServerSelector("np-a", "m"))
		serve("np-b-server", build.ServerSelector("np-b", "m"))
		serve("unrelated", map[string]string{"app": "unrelated"})
		// An unrelated pod on 443, the API server's port: a runner policy
		// that named "any address" for the API server would let the runner
		// reach every HTTPS service. Port 443 as uid 65532 through the
		// namespaced sysctl that Pod Security's restricted level allows.
		https := restrictedPod("unrelated-443", "exec /usr/local/bin/repot sim-server --listen :443 --profile strong --seed 1")
		https.Labels = map[string]string{"app": "unrelated"}
		https.Spec.RestartPolicy = corev1.RestartPolicyAlways
		https.Spec.SecurityContext.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}}
		https.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(443)}}, PeriodSeconds: 1}
		create(https)
		ctx, cancel = ctxTimeout(30 * time.Second)
		Expect(tc.c.Create(ctx, &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: "np-a-m", Namespace: realNS},
			Spec:       corev1.ServiceSpec{Selector: build.ServerSelector("np-a", "m"), Ports: []corev1.ServicePort{{Port: 8000}}},
		})).To(Succeed())
		cancel()
		serverA, serverB, unrelated, unrelated443 := ready("np-a-server"), ready("np-b-server"), ready("unrelated"), ready("unrelated-443")

		probe := func(name string, labels map[string]string, targets ...string) string {
			p := restrictedPod(name, "")
			p.Labels = labels
			p.Spec.Containers[0].Command = append([]string{"python3", "-c", probeScript}, targets...)
			create(p)
			p, log := finished(name)
			Expect(p.Status.Phase).To(Equal(corev1.PodSucceeded), log)
			GinkgoWriter.Printf("%s:\n%s", name, log)
			return log
		}
		By("a pod labelled as np-a's runner")
		log := probe("np-a-runner", map[string]string{build.LabelEvaluation: "np-a", build.LabelComponent: build.ComponentRunner},
			"own-server,"+serverA+",8000", "own-server-by-name,np-a-m."+realNS+".svc.cluster.local,8000",
			"api-server,kubernetes.default.svc.cluster.local,443",
			"other-evaluations-server,"+serverB+",8000", "unrelated-pod,"+unrelated+",8000", "unrelated-pod-443,"+unrelated443+",443",
			"metadata,"+metadataIP+",443")
		Expect(log).To(ContainSubstring("own-server reached"))
		Expect(log).To(ContainSubstring("own-server-by-name reached"), "the DNS rule and the server rule, through the Service")
		Expect(log).To(ContainSubstring("api-server reached"))
		Expect(log).To(ContainSubstring("other-evaluations-server blocked"))
		Expect(log).To(ContainSubstring("unrelated-pod blocked"))
		Expect(log).To(ContainSubstring("unrelated-pod-443 blocked"), "443 reaches the API server's addresses only")
		Expect(log).To(ContainSubstring("metadata blocked"), "the link-local metadata address, on the API server's port 443")

		By("a pod outside the evaluations; what it reaches besides the server shows the network itself works")
		log = probe("outsider", map[string]string{"app": "outsider"},
			"np-a-server,"+serverA+",8000", "unrelated-pod,"+unrelated+",8000", "unrelated-pod-443,"+unrelated443+",443", "metadata,"+metadataIP+",443")
		Expect(log).To(ContainSubstring("np-a-server blocked"))
		Expect(log).To(ContainSubstring("unrelated-pod reached"))
		Expect(log).To(ContainSubstring("unrelated-pod-443 reached"))
		Expect(log).To(ContainSubstring("metadata reached"), "the metadata stand-in answers pods no policy restricts")
	})

	It("runs a simulated evaluation to the end on the real node, in restricted pods under the operator's NetworkPolicies, and says how the sandbox held", func() {
		u := &repotv1.RepotEvaluation{}
		Expect(yaml.Unmarshal([]byte(againYAML), u)).To(Succeed())
		u.Name, u.Namespace = "np-run", realNS
		ctx, cancel := ctxTimeout(30 * time.Second)
		Expect(tc.c.Create(ctx, u)).To(Succeed())
		cancel()
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var nps networkingv1.NetworkPolicyList
			g.Expect(tc.c.List(ctx, &nps, client.InNamespace(realNS), client.MatchingLabels{build.LabelEvaluation: "np-run"})).To(Succeed())
			names := []string{}
			for _, np := range nps.Items {
				names = append(names, np.Name)
			}
			g.Expect(names).To(ContainElements(build.RunnerAccessName("np-run"), build.ServerPolicyName("np-run")))
			var pods corev1.PodList
			g.Expect(tc.c.List(ctx, &pods, client.InNamespace(realNS), client.MatchingLabels{build.LabelEvaluation: "np-run", build.LabelComponent: build.ComponentRunner})).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty())
			for _, p := range pods.Items {
				g.Expect(p.Spec.NodeName).To(Equal(realNode))
				for _, cs := range p.Status.ContainerStatuses {
					g.Expect(cs.ContainerID).To(HavePrefix("containerd://"))
				}
			}
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
		Eventually(func(g Gomega) {
			tc.operatorAlive()
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			e := &repotv1.RepotEvaluation{}
			g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: realNS, Name: "np-run"}, e)).To(Succeed())
			g.Expect(meta.IsStatusConditionTrue(e.Status.Conditions, repotv1.ConditionComplete)).To(BeTrue(), "conditions: %+v", e.Status.Conditions)
			g.Expect(e.Status.Progress.RunsDone).To(Equal(e.Status.Progress.RunsTotal))
			g.Expect(e.Status.SandboxMode).To(HavePrefix("none, seccomp"), "the runners' own filter, installed inside the runtime's")
		}).WithTimeout(8 * time.Minute).WithPolling(3 * time.Second).Should(Succeed())
	})

	// evaluationIn creates, in namespace ns, an evaluation of one vLLM
	// model placed on the real node. Its resources are set: the operator's
	// defaults (4 cpu and 32Gi per GPU) are sized for a GPU node, not for
	// this machine's node.
	evaluationIn := func(ns, name string, gpus int, image string) *repotv1.RepotEvaluation {
		y := `apiVersion: repot.dev/v1alpha1
kind: RepotEvaluation
metadata:
  name: ` + name + `
spec:
  suite: open-source-120
  stalledAfterSeconds: 600
  models:
  - name: m
    vllm:
      model: Qwen/Qwen3-0.6B
      image: ` + image + `
      gpus: ` + string(rune('0'+gpus)) + `
      nodeSelector: [{key: ` + realNodeLabel + `, value: "true"}]
      tolerations: [{key: ` + realNodeLabel + `, operator: Exists}]
      resources: {requests: {cpu: 100m, memory: 256Mi}, limits: {memory: 1Gi}}
`
		u := &repotv1.RepotEvaluation{}
		Expect(yaml.Unmarshal([]byte(y), u)).To(Succeed())
		u.Namespace = ns
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		Expect(tc.c.Create(ctx, u)).To(Succeed())
		return u
	}
	evaluation := func(name string, gpus int, image string) { evaluationIn("default", name, gpus, image) }
	serverReason := func(g Gomega, name string) (repotv1.ModelStatus, *metav1.Condition) {
		tc.operatorAlive()
		ctx, cancel := ctxTimeout(30 * time.Second)
		defer cancel()
		e := &repotv1.RepotEvaluation{}
		g.Expect(tc.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, e)).To(Succeed())
		g.Expect(e.Status.Models).To(HaveLen(1))
		return e.Status.Models[0], meta.FindStatusCondition(e.Status.Conditions, repotv1.ConditionStalled)
	}

	It("stalls a vLLM model whose image cannot be pulled, naming the image, from the kubelet's ErrImagePull", func() {
		evaluation("unpullable", 1, unpullableVLLM)
		Eventually(func(g Gomega) {
			m, stalled := serverReason(g, "unpullable")
			g.Expect(m.Server.Reason).To(Equal(repotv1.ReasonImagePullFailed))
			g.Expect(stalled).NotTo(BeNil())
			g.Expect(stalled.Status).To(Equal(metav1.ConditionTrue))
			g.Expect(stalled.Message).To(ContainSubstring(unpullableVLLM))
			g.Expect(stalled.Message).To(Or(ContainSubstring("ErrImagePull"), ContainSubstring("ImagePullBackOff")))
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("keeps a model asking for more GPUs than the node has WaitingForCapacity", func() {
		evaluation("too-big", 4, unpullableVLLM)
		Eventually(func(g Gomega) {
			m, _ := serverReason(g, "too-big")
			g.Expect(m.Server.Reason).To(Equal(repotv1.ReasonWaitingForCapacity))
			g.Expect(m.Server.Message).To(ContainSubstring("nvidia.com/gpu"))
		}).WithTimeout(2 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("starts a vLLM model's server pod in a namespace that enforces the restricted Pod Security Standard", func() {
		// The server pod as the operator builds it for vLLM (non-root,
		// no capabilities, RuntimeDefault seccomp, a read-only root with
		// HOME and the caches on emptyDirs), in a namespace that enforces
		// restricted, as the namespaced installs' namespace does. The image
		// is the project's, which has no vLLM in it: the container starts,
		// finds no `vllm` and exits, and the kubelet restarts it. What this
		// checks is that the API server admits the pod and the kubelet
		// starts it, which a root vLLM pod never gets to.
		const ns = "vllm-restricted"
		// The node has two SIMULATED GPUs; the specs above may hold one.
		for _, name := range []string{"unpullable", "too-big"} {
			ctx, cancel := ctxTimeout(30 * time.Second)
			_ = tc.c.Delete(ctx, &repotv1.RepotEvaluation{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}})
			cancel()
		}
		tc.kubectl("create", "namespace", ns)
		tc.kubectl("label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted")
		u := evaluationIn(ns, "restricted-vllm", 1, projectImage)
		DeferCleanup(func() {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			_ = tc.c.Delete(ctx, u)
		})
		Eventually(func(g Gomega) {
			ctx, cancel := ctxTimeout(30 * time.Second)
			defer cancel()
			var pods corev1.PodList
			g.Expect(tc.c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels(build.ServerSelector("restricted-vllm", "m")))).To(Succeed())
			g.Expect(pods.Items).NotTo(BeEmpty(), "no server pod: %s", tc.kubectl("get", "events", "-n", ns))
			p := pods.Items[0]
			g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning), "pod %s: %+v", p.Name, p.Status)
			started := false
			for _, c := range p.Status.ContainerStatuses {
				if c.Name == "server" && (c.State.Running != nil || c.RestartCount > 0 || c.State.Terminated != nil || c.LastTerminationState.Terminated != nil) {
					started = true
				}
			}
			g.Expect(started).To(BeTrue(), "the vLLM container never started: %+v", p.Status.ContainerStatuses)
			g.Expect(p.Spec.SecurityContext.RunAsNonRoot).To(HaveValue(BeTrue()))
		}).WithTimeout(3 * time.Minute).WithPolling(2 * time.Second).Should(Succeed())
	})

	It("leaves nothing behind when the cluster stops: processes, mounts, bridge, iptables rules, kernel settings", func() {
		tc.stop()
		Expect(mountsUnder(dir)).To(BeEmpty())
		_, err := os.Stat("/sys/class/net/repot0")
		Expect(os.IsNotExist(err)).To(BeTrue(), "the bridge repot0 is still there")
		for _, table := range []string{"filter", "nat", "mangle"} {
			out, err := exec.Command("iptables", "-t", table, "-S").CombinedOutput()
			Expect(err).NotTo(HaveOccurred(), string(out))
			Expect(string(out)).NotTo(ContainSubstring("repot-local-"), "CNI rules left in table %s", table)
		}
		Expect(readSysctls()).To(Equal(sysctls))
		Expect(iptablesChains()).To(Equal(chains), "iptables chains before the cluster started and after it stopped")
		Expect(nftTables()).To(Equal(tables), "nftables tables before the cluster started and after it stopped (the NetworkPolicy enforcer's)")
		Expect(nftTables()).NotTo(ContainElement("inet kube-network-policies"))
		out, _ := exec.Command("pgrep", "-af", dir).CombinedOutput()
		Expect(strings.TrimSpace(string(out))).To(BeEmpty(), "processes of the real node still run")
		if !hadVarLibKubelet {
			_, err := os.Stat("/var/lib/kubelet")
			Expect(os.IsNotExist(err)).To(BeTrue(), "/var/lib/kubelet was made and left")
		}
	})
})

func readSysctls() map[string]string {
	m := map[string]string{}
	for _, s := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops", "net/ipv4/conf/all/route_localnet"} {
		b, err := os.ReadFile("/proc/sys/" + s)
		Expect(err).NotTo(HaveOccurred())
		m[s] = strings.TrimSpace(string(b))
	}
	return m
}

// iptablesChains lists the chains of the filter, nat and mangle tables.
func iptablesChains() map[string][]string {
	m := map[string][]string{}
	for _, table := range []string{"filter", "nat", "mangle"} {
		out, err := exec.Command("iptables", "-t", table, "-S").CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), string(out))
		m[table] = []string{}
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "-N ") || strings.HasPrefix(l, "-P ") {
				m[table] = append(m[table], l)
			}
		}
	}
	return m
}

// nftTables lists the nftables tables ("inet NAME") but those iptables-nft
// makes for the iptables tables (ip/ip6 filter, nat, mangle, raw,
// security), which iptablesChains compares.
func nftTables() []string {
	out, err := exec.Command("nft", "list", "tables").CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), string(out))
	tables := []string{}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "table" {
			continue
		}
		if (f[1] == "ip" || f[1] == "ip6") && slices.Contains([]string{"filter", "nat", "mangle", "raw", "security"}, f[2]) {
			continue
		}
		tables = append(tables, f[1]+" "+f[2])
	}
	return tables
}

func mountsUnder(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) > 4 && strings.HasPrefix(fs[4], dir+"/") {
			out = append(out, fs[4])
		}
	}
	return out
}
