package ledger

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"repot.dev/repot-operator/contract"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// TestLedgerAgainstAPIServer runs restore, sync and merge against a real
// kube-apiserver the way a runner pod does: with a service account token in a
// file and the CA in another, as an account that holds only the runner Role
// the operator creates (get, update and patch on its own ledger by name).
func TestLedgerAgainstAPIServer(t *testing.T) {
	cfg := (&framework.Framework{CRDDirs: []string{}}).InitForTest(t)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(cfg)

	const ns = "default"
	a, b, c := rec("p1", "pot", true, ""), rec("p2", "pot", false, "reset"), rec("p2", "pot", true, "")
	for _, name := range []string{"led-0", "other-ledger"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string]string{contract.LedgerRecordsKey: jsonl(t, a, b)}}
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "runner", Namespace: ns}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"led-0"},
		Verbs: []string{"get", "update", "patch"},
	}}}
	if _, err := admin.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "runner", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "runner"},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "runner", Namespace: ns}}}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "runner", Namespace: ns}}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tr, err := admin.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "runner", &authnv1.TokenRequest{
		Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokenFile, caFile := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(tokenFile, []byte(tr.Status.Token), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, cfg.CAData, 0o600); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(cfg.Host, "https://")
	env2 := map[string]string{"KUBERNETES_SERVICE_HOST": host[:strings.LastIndex(host, ":")], "KUBERNETES_SERVICE_PORT": host[strings.LastIndex(host, ":")+1:]}
	runnerCfg, err := RestConfig(ClientOptions{TokenFile: tokenFile, CAFile: caFile}, func(k string) string { return env2[k] })
	if err != nil {
		t.Fatal(err)
	}
	runner := kubernetes.NewForConfigOrDie(runnerCfg)
	store := &Store{Client: runner.CoreV1().ConfigMaps(ns), Name: "led-0"}

	path := filepath.Join(t.TempDir(), "records.jsonl")
	if _, err := Restore(ctx, store, path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if diff := cmp.Diff(jsonl(t, a, b), string(got)); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}

	// The finished run c replaces the infra error b; a again changes nothing.
	if n, err := store.Merge(ctx, []contract.Record{a, c}); err != nil || n != 1 {
		t.Fatalf("Merge = %d, %v; want 1, nil", n, err)
	}
	cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, "led-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonl(t, a, c), cm.Data[contract.LedgerRecordsKey]); diff != "" {
		t.Errorf("ledger after merge (-want +got):\n%s", diff)
	}

	// The sidecar: records appended to the file reach the ledger, at the
	// latest when it is stopped.
	d := rec("p3", "repot", true, "")
	appendFile(t, path, jsonl(t, c, d))
	sctx, stop := context.WithCancel(ctx)
	stop()
	modeFile := filepath.Join(filepath.Dir(path), contract.SandboxModeFile)
	if err := os.WriteFile(modeFile, []byte("none, seccomp, landlock off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	provFile := filepath.Join(filepath.Dir(path), contract.ProvenanceFile)
	const prov = `{"repot_version":"(devel)","served_models":[{"id":"m","root":"org/m","max_model_len":4096}],"request":{"temperature":0}}` + "\n"
	if err := os.WriteFile(provFile, []byte(prov), 0o644); err != nil {
		t.Fatal(err)
	}
	syncer := &Syncer{Store: store, Tail: &Tail{Path: path}, ModeFile: modeFile, ProvenanceFile: provFile}
	if _, err := syncer.Run(sctx); err != nil {
		t.Fatal(err)
	}
	cm, err = admin.CoreV1().ConfigMaps(ns).Get(ctx, "led-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := cm.Annotations[contract.LedgerSandboxModeAnnotation]; got != "none, seccomp, landlock off" {
		t.Errorf("sandbox mode annotation = %q, want the runner's mode", got)
	}
	if got := cm.Annotations[contract.LedgerProvenanceAnnotation]; got != prov {
		t.Errorf("provenance annotation = %q, want the runner's file %q", got, prov)
	}
	cm, err = admin.CoreV1().ConfigMaps(ns).Get(ctx, "led-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(jsonl(t, a, c, d), cm.Data[contract.LedgerRecordsKey]); diff != "" {
		t.Errorf("ledger after sync (-want +got):\n%s", diff)
	}

	// Least privilege: another ledger is out of reach.
	other := &Store{Client: runner.CoreV1().ConfigMaps(ns), Name: "other-ledger"}
	if _, err := other.Merge(ctx, []contract.Record{c}); !apierrors.IsForbidden(err) {
		t.Errorf("merging into another ledger: %v; want forbidden", err)
	}
	if _, err := runner.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing ConfigMaps: %v; want forbidden", err)
	}
}
