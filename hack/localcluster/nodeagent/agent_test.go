package nodeagent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
)

// startAgent runs an agent with one node against a fake API server.
func startAgent(t *testing.T) (*fake.Clientset, string) {
	t.Helper()
	cs := fake.NewClientset()
	cs.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		return true, &authenticationv1.TokenRequest{Status: authenticationv1.TokenRequestStatus{Token: "test-token"}}, nil
	})
	dir := t.TempDir()
	a := New(Options{Client: cs, Nodes: DefaultNodes(1), PodsDir: dir, RepotBinary: "/bin/false",
		APIServer: "https://127.0.0.1:6443", APIPort: 6443, CAFile: "/dev/null",
		RestartBackoff: 100 * time.Millisecond, ShutdownGrace: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("agent: %v", err)
		}
	})
	select {
	case <-a.Ready():
	case err := <-done:
		t.Fatalf("agent stopped: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("agent not ready")
	}
	return cs, dir
}

func shPod(name string, restart corev1.RestartPolicy, init []corev1.Container, main ...corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ev", Name: name, UID: types.UID(name + "-0123456789")},
		Spec: corev1.PodSpec{
			NodeName: "localcluster-node-0", RestartPolicy: restart, TerminationGracePeriodSeconds: ptr.To[int64](2),
			InitContainers: init, Containers: main,
			Volumes: []corev1.Volume{{Name: "out", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

func sh(name, script string) corev1.Container {
	return corev1.Container{Name: name, Image: "repot-operator:test", Command: []string{"sh", "-c", script},
		VolumeMounts: []corev1.VolumeMount{{Name: "out", MountPath: "/repot/out"}},
		Env:          []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}}}
}

func waitPod(t *testing.T, cs *fake.Clientset, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var last *corev1.Pod
	for i := 0; i < 200; i++ {
		p, err := cs.CoreV1().Pods("ev").Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			last = p
			if ok(p) {
				return p
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pod %s did not reach the expected state; last status: %+v", name, last.Status)
	return nil
}

func TestAgentRunsInitSidecarAndMain(t *testing.T) {
	cs, _ := startAgent(t)
	sidecar := sh("sync", `trap 'echo stopped >> /repot/out/sidecar; exit 0' TERM; while :; do sleep 0.05; done`)
	sidecar.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
	pod := shPod("p1", corev1.RestartPolicyNever,
		[]corev1.Container{sh("restore", `echo restored > /repot/out/records`), sidecar},
		sh("run", `test "$(cat /repot/out/records)" = restored && case "$POD_IP" in 127.*) ;; *) exit 9;; esac && test -n "$REPOT_HOSTS_FILE" && test "$KUBERNETES_SERVICE_HOST" = 127.0.0.1`))
	if _, err := cs.CoreV1().Pods("ev").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "p1", func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
	})
	if p.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("phase %s; container statuses %+v", p.Status.Phase, p.Status.ContainerStatuses)
	}
	if !strings.HasPrefix(p.Status.PodIP, "127.") {
		t.Errorf("pod IP %q is not on loopback", p.Status.PodIP)
	}
	if got := p.Status.ContainerStatuses[0].State.Terminated; got == nil || got.ExitCode != 0 {
		t.Errorf("main container state %+v, want terminated with 0", p.Status.ContainerStatuses[0].State)
	}
	if got := p.Status.InitContainerStatuses[1].State.Terminated; got == nil {
		t.Errorf("sidecar not terminated after the main container finished: %+v", p.Status.InitContainerStatuses[1].State)
	}
}

func TestAgentReportsExitCodeAndUnrunnableImage(t *testing.T) {
	cs, _ := startAgent(t)
	ctx := context.Background()
	if _, err := cs.CoreV1().Pods("ev").Create(ctx, shPod("fails", corev1.RestartPolicyNever, nil, sh("run", "exit 3")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	vllm := shPod("vllm", corev1.RestartPolicyAlways, nil, corev1.Container{Name: "server", Image: "vllm/vllm-openai:v0.11.0"})
	if _, err := cs.CoreV1().Pods("ev").Create(ctx, vllm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "fails", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if got := p.Status.ContainerStatuses[0].State.Terminated; got == nil || got.ExitCode != 3 {
		t.Errorf("state %+v, want terminated with exit code 3", p.Status.ContainerStatuses[0].State)
	}
	p = waitPod(t, cs, "vllm", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].State.Waiting != nil
	})
	w := p.Status.ContainerStatuses[0].State.Waiting
	if w.Reason != "ErrImagePull" || !strings.Contains(w.Message, "ImageNotRunnableOnProcessNode") {
		t.Errorf("waiting %+v, want ErrImagePull with ImageNotRunnableOnProcessNode", w)
	}
	if p.Status.Phase != corev1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
}

func TestAgentRestartsAndDeletesGracefully(t *testing.T) {
	cs, dir := startAgent(t)
	ctx := context.Background()
	// Fails on its first run (no marker yet), then runs until SIGTERM.
	script := `if [ ! -f /repot/out/ran ]; then touch /repot/out/ran; exit 1; fi; trap 'echo term > ` + "$HOME" + `/../logs/term; exit 0' TERM; while :; do sleep 0.05; done`
	if _, err := cs.CoreV1().Pods("ev").Create(ctx, shPod("svc", corev1.RestartPolicyAlways, nil, sh("server", script)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, cs, "svc", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount == 1 && cs[0].State.Running != nil && cs[0].Ready
	})
	if lt := p.Status.ContainerStatuses[0].LastTerminationState.Terminated; lt == nil || lt.ExitCode != 1 {
		t.Errorf("last termination %+v, want exit code 1", lt)
	}
	// Graceful deletion as the API server does it: deletionTimestamp set,
	// then the node stops the containers and removes the object.
	p.DeletionTimestamp = ptr.To(metav1.Now())
	p.DeletionGracePeriodSeconds = ptr.To[int64](5)
	if _, err := cs.CoreV1().Pods("ev").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		_, err := cs.CoreV1().Pods("ev").Get(ctx, "svc", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if i > 100 {
			t.Fatal("pod object not removed after its containers stopped")
		}
		time.Sleep(50 * time.Millisecond)
	}
	terms, _ := filepath.Glob(filepath.Join(dir, "ev", "svc-*", "logs", "term"))
	if len(terms) != 1 {
		t.Errorf("the container did not get SIGTERM before the pod was removed")
	}
	if vols, _ := filepath.Glob(filepath.Join(dir, "ev", "svc-*", "volumes")); len(vols) != 0 {
		t.Errorf("volumes left behind: %v", vols)
	}
}
