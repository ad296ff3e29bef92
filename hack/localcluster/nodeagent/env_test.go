package nodeagent

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestResolveEnv(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "run-0-abc", Namespace: "ev", UID: "u1",
		Labels:      map[string]string{"app": "runner"},
		Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": "3"}},
		Spec: corev1.PodSpec{NodeName: "n0", ServiceAccountName: "sa"}}
	src := envSource{
		pod: pod, podIP: "127.0.0.8", hostIP: "127.0.0.1", node: DefaultNodes(1)[0],
		configMap: func(name string) (*corev1.ConfigMap, error) {
			if name != "cfg" {
				return nil, errors.New("not found")
			}
			return &corev1.ConfigMap{Data: map[string]string{"B": "from-cm", "A": "a"}}, nil
		},
		secret: func(name string) (*corev1.Secret, error) {
			if name != "key" {
				return nil, errors.New("not found")
			}
			return &corev1.Secret{Data: map[string][]byte{"token": []byte("s3cret")}}, nil
		},
	}
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	c := &corev1.Container{
		Name:    "run",
		EnvFrom: []corev1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}},
		Env: []corev1.EnvVar{
			fieldEnv("POD_IP", "status.podIP"),
			fieldEnv("POD_NAME", "metadata.name"),
			fieldEnv("POD_NAMESPACE", "metadata.namespace"),
			fieldEnv("JOB_COMPLETION_INDEX", "metadata.annotations['batch.kubernetes.io/job-completion-index']"),
			fieldEnv("APP", "metadata.labels['app']"),
			{Name: "LISTEN", Value: "$(POD_IP):8000"},
			{Name: "KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "key"}, Key: "token"}}},
			{Name: "OPT", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "k", Optional: ptr.To(true)}}},
			{Name: "CM_A", Value: "overridden"},
			{Name: "MEM", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1Mi")}}},
		},
		Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("4Gi")}},
	}
	got, err := resolveEnv(src, c)
	if err != nil {
		t.Fatal(err)
	}
	want := []envVar{
		{"CM_A", "overridden"}, {"CM_B", "from-cm"},
		{"POD_IP", "127.0.0.8"}, {"POD_NAME", "run-0-abc"}, {"POD_NAMESPACE", "ev"},
		{"JOB_COMPLETION_INDEX", "3"}, {"APP", "runner"}, {"LISTEN", "127.0.0.8:8000"},
		{"KEY", "s3cret"}, {"MEM", "4096"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(envVar{})); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}

	c.Env = append(c.Env, corev1.EnvVar{Name: "X", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "k"}}})
	if _, err := resolveEnv(src, c); err == nil || !strings.Contains(err.Error(), "env X") {
		t.Errorf("missing required secret: got error %v, want one naming env X", err)
	}
}

func TestBuildArgv(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"POD_IP": "127.0.0.8", "JOB_COMPLETION_INDEX": "2"}[k]
		return v, ok
	}
	pm := newPathMap(map[string]string{"/repot/out": "/p/volumes/out"})
	for _, tc := range []struct {
		name    string
		c       corev1.Container
		want    []string
		wantErr bool
	}{
		{"entrypoint", corev1.Container{Args: []string{"sim-server", "--listen=$(POD_IP):8000"}},
			[]string{"/bin/repot", "sim-server", "--listen=127.0.0.8:8000"}, false},
		{"repot command", corev1.Container{Command: []string{"repot"}, Args: []string{"run", "--out", "/repot/out", "--shard-index=$(JOB_COMPLETION_INDEX)"}},
			[]string{"/bin/repot", "run", "--out", "/p/volumes/out", "--shard-index=2"}, false},
		{"absolute repot", corev1.Container{Command: []string{"/usr/local/bin/repot", "manager"}, Args: []string{"--metrics-bind-address=:8080"}},
			[]string{"/bin/repot", "manager", "--metrics-bind-address=127.0.0.8:8080"}, false},
		{"missing executable", corev1.Container{Command: []string{"/opt/vllm/bin/serve-it"}}, nil, true},
	} {
		got, err := buildArgv(&tc.c, "/bin/repot", lookup, pm, "127.0.0.8")
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want error %v", tc.name, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: argv (-want +got):\n%s", tc.name, diff)
		}
	}
}
