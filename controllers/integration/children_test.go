package integration_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	repotv1 "repot.dev/repot-operator/api/v1alpha1"
	revtesting "repot.dev/repot-operator/api/v1alpha1/testing"
	"repot.dev/repot-operator/controllers/build"
)

var _ = Describe("children of each model kind", func() {
	It("starts a simulated server, and its runner only once the server answers", func() {
		ns := createNamespace("sim")
		ev := revtesting.MakeEvaluation("ev", ns).Simulated("strong", "strong", 7).FaultPermille(5).Shards(2).Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())

		var d appsv1.Deployment
		Eventually(exists(&d, ns, build.ServerName("ev", "strong"))).Should(BeTrue())
		Eventually(exists(&corev1.Service{}, ns, build.ServerName("ev", "strong"))).Should(BeTrue())
		server := d.Spec.Template.Spec.Containers[0]
		Expect(server.Image).To(Equal(testImage))
		Expect(server.Command).To(Equal([]string{"repot"}))
		Expect(server.Args).To(Equal([]string{"sim-server", "--listen=$(POD_IP):8000", "--profile", "strong", "--served-model-name", "strong", "--seed", "7", "--fault-permille", "5"}))
		Expect(server.Env[0].ValueFrom.FieldRef.FieldPath).To(Equal("status.podIP"))
		sidecar := d.Spec.Template.Spec.Containers[1]
		Expect(sidecar.Args).To(ContainElements("ready-check", "--listen=$(POD_IP):8081"))
		Expect(sidecar.ReadinessProbe.HTTPGet.Path).To(Equal("/readyz"))
		Expect(sidecar.ReadinessProbe.HTTPGet.Port.IntValue()).To(Equal(8081))
		By("gating the runner, and its ledgers, on readiness")
		Consistently(exists(&batchv1.Job{}, ns, build.RunnerJobName("ev", "strong")), "500ms").Should(BeFalse())
		Expect(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "strong", 0))()).To(BeFalse())
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionServersReady).Reason).To(Equal(repotv1.ReasonServersStarting))
			g.Expect(model(g, e, 0).Server.State).To(Equal(repotv1.ServerStarting))
		})
		setServerReady(ns, "ev", "strong", true)

		for i := range 2 {
			Eventually(exists(&corev1.ConfigMap{}, ns, build.LedgerName("ev", "strong", i))).Should(BeTrue())
		}
		var j batchv1.Job
		Eventually(exists(&j, ns, build.RunnerJobName("ev", "strong"))).Should(BeTrue())
		Expect(*j.Spec.CompletionMode).To(Equal(batchv1.IndexedCompletion))
		Expect(*j.Spec.Completions).To(Equal(int32(2)))
		Expect(*j.Spec.Parallelism).To(Equal(int32(2)))
		Expect(j.Spec.PodFailurePolicy.Rules[0].Action).To(Equal(batchv1.PodFailurePolicyActionIgnore))
		Expect(j.Spec.PodFailurePolicy.Rules[0].OnPodConditions[0].Type).To(Equal(corev1.DisruptionTarget))
		run := j.Spec.Template.Spec.Containers[0]
		Expect(run.Args).To(ContainElements("--base-url", "http://"+build.ServerName("ev", "strong")+"."+ns+".svc:8000/v1",
			"--shard-index=$(JOB_COMPLETION_INDEX)", "--model-label", "strong", "--resume"))
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(condition(e, repotv1.ConditionServersReady).Status).To(Equal(metav1.ConditionTrue))
			g.Expect(condition(e, repotv1.ConditionRunning).Reason).To(Equal(repotv1.ReasonRunnersActive))
			g.Expect(e.Status.Summary.Servers).To(Equal("1/1"))
		})
	})

	It("locks down runner pods: token only in the ledger containers, restricted security, own Role and NetworkPolicy", func() {
		ns := createNamespace("sec")
		ev := revtesting.MakeEvaluation("ev", ns).Endpoint("api", "https://10.1.2.3:9000/v1", "gpt-x").
			APIKeySecret("key", "token").Shards(3).RuntimeClass("gvisor").Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())

		By("starting an endpoint model's runner at once, with no server")
		var j batchv1.Job
		Eventually(exists(&j, ns, build.RunnerJobName("ev", "api"))).Should(BeTrue())
		Expect(exists(&appsv1.Deployment{}, ns, build.ServerName("ev", "api"))()).To(BeFalse())
		pod := j.Spec.Template.Spec
		Expect(pod.Containers[0].Args).To(ContainElements("--base-url", "https://10.1.2.3:9000/v1", "--model", "gpt-x", "--api-key-env", "REPOT_API_KEY"))
		Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
		Expect(pod.ServiceAccountName).To(Equal("ev-runner"))
		Expect(*pod.RuntimeClassName).To(Equal("gvisor"))
		Expect(*pod.SecurityContext.RunAsNonRoot).To(BeTrue())
		Expect(pod.SecurityContext.SeccompProfile.Type).To(Equal(corev1.SeccompProfileTypeRuntimeDefault))
		Expect(pod.InitContainers).To(HaveLen(2))
		Expect(pod.InitContainers[0].Args[:2]).To(Equal([]string{"ledger", "restore"}))
		Expect(pod.InitContainers[1].Args[:2]).To(Equal([]string{"ledger", "sync"}))
		Expect(*pod.InitContainers[1].RestartPolicy).To(Equal(corev1.ContainerRestartPolicyAlways))
		all := append(append([]corev1.Container{}, pod.InitContainers...), pod.Containers...)
		for _, c := range all {
			Expect(*c.SecurityContext.ReadOnlyRootFilesystem).To(BeTrue(), c.Name)
			Expect(*c.SecurityContext.AllowPrivilegeEscalation).To(BeFalse(), c.Name)
			Expect(c.SecurityContext.Capabilities.Drop).To(Equal([]corev1.Capability{"ALL"}), c.Name)
			hasToken := false
			for _, m := range c.VolumeMounts {
				if m.Name == "ledger-token" {
					hasToken = true
				}
			}
			Expect(hasToken).To(Equal(c.Name != "run"), c.Name)
		}

		var role rbacv1.Role
		Expect(k8s.Get(ctx, key(ns, "ev-runner"), &role)).To(Succeed())
		Expect(role.Rules).To(HaveLen(1))
		Expect(role.Rules[0].Resources).To(Equal([]string{"configmaps"}))
		Expect(role.Rules[0].Verbs).To(ConsistOf("get", "patch"))
		Expect(role.Rules[0].ResourceNames).To(Equal([]string{build.LedgerName("ev", "api", 0), build.LedgerName("ev", "api", 1), build.LedgerName("ev", "api", 2)}))
		var rb rbacv1.RoleBinding
		Expect(k8s.Get(ctx, key(ns, "ev-runner"), &rb)).To(Succeed())
		Expect(rb.Subjects[0].Name).To(Equal("ev-runner"))

		var np networkingv1.NetworkPolicy
		Expect(k8s.Get(ctx, key(ns, "ev-runner"), &np)).To(Succeed())
		Expect(np.Spec.PolicyTypes).To(ConsistOf(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress))
		Expect(np.Spec.Ingress).To(BeEmpty())
		Expect(np.Spec.Egress[1].To[0].IPBlock.CIDR).To(Equal("10.1.2.3/32"))
		Expect(np.Spec.Egress[1].Ports[0].Port.IntValue()).To(Equal(9000))
		Expect(np.Spec.Egress[0].To[0].PodSelector.MatchLabels).To(Equal(map[string]string{"k8s-app": "kube-dns"}), "DNS only to the cluster DNS pods")
		// The API server rule names the addresses of the kubernetes
		// EndpointSlice in default (envtest's API server publishes its own).
		var apiSlices discoveryv1.EndpointSliceList
		Expect(k8s.List(ctx, &apiSlices, client.InNamespace("default"), client.MatchingLabels{discoveryv1.LabelServiceName: "kubernetes"})).To(Succeed())
		var apiAddrs []string
		for _, sl := range apiSlices.Items {
			for _, ep := range sl.Endpoints {
				for _, a := range ep.Addresses {
					apiAddrs = append(apiAddrs, a+"/32")
				}
			}
		}
		Expect(apiAddrs).NotTo(BeEmpty())
		var apiTo []string
		for _, peer := range np.Spec.Egress[2].To {
			apiTo = append(apiTo, peer.IPBlock.CIDR)
		}
		Expect(apiTo).To(ConsistOf(apiAddrs), "the API server rule names the kubernetes EndpointSlice's addresses")
		Expect(exists(&networkingv1.NetworkPolicy{}, ns, build.ServerPolicyName("ev"))()).To(BeFalse(), "no servers, no servers' policy")
		eventuallyEval(ns, "ev", func(g Gomega, e *repotv1.RepotEvaluation) {
			g.Expect(model(g, e, 0).Server.State).To(Equal(repotv1.ServerExternal))
		})
	})

	It("schedules a vLLM server on an H100 node with GPUs, tolerations, a long startup probe, the cache and the token", func() {
		ns := createNamespace("vllm")
		ev := revtesting.MakeEvaluation("ev", ns).VLLM("qwen", "Qwen/Qwen3-30B-A3B").GPUs(2).
			NodeLabel("topology.kubernetes.io/zone", "a").ModelCachePVC("hf-cache").HFTokenSecret("hf", "token").Obj()
		Expect(k8s.Create(ctx, ev)).To(Succeed())
		var d appsv1.Deployment
		Eventually(exists(&d, ns, build.ServerName("ev", "qwen"))).Should(BeTrue())
		pod := d.Spec.Template.Spec
		Expect(pod.NodeSelector).To(Equal(map[string]string{
			"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "topology.kubernetes.io/zone": "a",
		}))
		Expect(pod.Tolerations).To(ContainElement(corev1.Toleration{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}))
		server := pod.Containers[0]
		Expect(server.Image).To(Equal(repotv1.DefaultVLLMImage))
		gpu := resource.MustParse("2")
		Expect(server.Resources.Limits["nvidia.com/gpu"]).To(Equal(gpu))
		Expect(server.Resources.Requests["nvidia.com/gpu"]).To(Equal(gpu))
		Expect(server.Command).To(HaveExactElements("/repot-tools/repot", "gpu-telemetry", "--exec", "--listen=:9400", "--",
			"vllm", "serve", "Qwen/Qwen3-30B-A3B", "--host", "0.0.0.0", "--port", "8000", "--tensor-parallel-size", "2"))
		Expect(pod.InitContainers).To(ConsistOf(HaveField("Name", "repot-tools")))
		Expect(server.StartupProbe.PeriodSeconds * server.StartupProbe.FailureThreshold).To(BeNumerically(">=", 1800))
		Expect(server.Env).To(ContainElement(HaveField("Name", "HF_TOKEN")))
		Expect(pod.Volumes[0].PersistentVolumeClaim.ClaimName).To(Equal("hf-cache"))
		Expect(server.VolumeMounts[0].MountPath).To(Equal("/model-cache"))
		Expect(server.Env).To(ContainElement(corev1.EnvVar{Name: "HF_HOME", Value: "/model-cache"}))
		Expect(pod.Containers[1].Args).To(ContainElements("--model", "Qwen/Qwen3-30B-A3B"))
		Expect(*d.Spec.Replicas).To(Equal(int32(1)))
		Expect(d.Spec.Strategy.Type).To(Equal(appsv1.RecreateDeploymentStrategyType))
		Expect(ptr.Deref(pod.AutomountServiceAccountToken, true)).To(BeFalse())
	})
})
