// Package framework is the one envtest harness of the module's API-server
// tests (modelled on Kueue's test/integration/framework): a Framework starts
// etcd and kube-apiserver from bin/ (hack/build-cluster-bins.sh envtest)
// with the CRDs of config/crd/bases, makes clients, runs a manager, and
// stops it all. It can hand out a rest.Config that authenticates or
// impersonates a given user or ServiceAccount (ConfigAs), so that a
// manager can run with only the RBAC the project ships.
//
// Its users: controllers/integration (the controller suite and its
// benchmark), controllers/schedule, runner/ledger and api/v1alpha1.
package framework

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zapcore"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"
)

// DefaultCRDDir is the operator's CRDs, relative to the module root.
const DefaultCRDDir = "config/crd/bases"

// Framework is one test control plane. Set the fields, then Init; Teardown
// stops it.
type Framework struct {
	// CRDDirs are the directories of CRDs to install, relative to the
	// module root unless absolute; every one must exist. Nil means
	// DefaultCRDDir; an empty non-nil slice installs none.
	CRDDirs []string
	// APIServerFlags are set on the kube-apiserver ("service-cluster-ip-range":
	// "10.0.0.0/16").
	APIServerFlags map[string]string
	// QPS and Burst of the admin rest.Config (0: 500 and 1000, so that the
	// tests' clients are not throttled).
	QPS   float32
	Burst int

	root string
	env  *envtest.Environment
	cfg  *rest.Config
}

// ErrBinariesMissing is Init's error when bin/ lacks etcd or kube-apiserver;
// callers skip their tests on it (errors.Is).
var ErrBinariesMissing = errors.New("the test control plane is not built")

// ModuleRoot is the directory holding go.mod, from the working directory up.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// BinariesMissing says why envtest cannot run under root, or "" when it
// can: bin/etcd and bin/kube-apiserver must be built.
func BinariesMissing(root string) string {
	for _, b := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
			return fmt.Sprintf("bin/%s is missing: run `make envtest-bin` (hack/build-cluster-bins.sh envtest) to build the test control plane", b)
		}
	}
	return ""
}

// Init starts etcd and kube-apiserver from the module's bin/ with the CRDs
// installed and returns the admin (system:masters) config. When bin/ lacks
// them, the error wraps ErrBinariesMissing and says how to build them.
func (f *Framework) Init() (*rest.Config, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	f.root = root
	if why := BinariesMissing(root); why != "" {
		return nil, fmt.Errorf("%w: %s", ErrBinariesMissing, why)
	}
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapLevel())))
	dirs := f.CRDDirs
	if dirs == nil {
		dirs = []string{DefaultCRDDir}
	}
	env := &envtest.Environment{BinaryAssetsDirectory: filepath.Join(root, "bin"), ErrorIfCRDPathMissing: true}
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, filepath.FromSlash(d))
		}
		env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, d)
	}
	for k, v := range f.APIServerFlags {
		env.ControlPlane.GetAPIServer().Configure().Set(k, v)
	}
	cfg, err := env.Start()
	if err != nil {
		_ = env.Stop() // a CRD refused after the control plane started
		return nil, fmt.Errorf("start envtest: %w", err)
	}
	cfg.QPS, cfg.Burst = 500, 1000
	if f.QPS > 0 {
		cfg.QPS = f.QPS
	}
	if f.Burst > 0 {
		cfg.Burst = f.Burst
	}
	f.env, f.cfg = env, cfg
	return cfg, nil
}

// InitForTest is Init for one test: it skips t when bin/ lacks the
// binaries, fails it on any other error, and tears down when t ends.
func (f *Framework) InitForTest(t testing.TB) *rest.Config {
	t.Helper()
	cfg, err := f.Init()
	if errors.Is(err, ErrBinariesMissing) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := f.Teardown(); err != nil {
			t.Errorf("stop the test control plane: %v", err)
		}
	})
	return cfg
}

// Root is the module root Init found.
func (f *Framework) Root() string { return f.root }

// Config is the admin config Init returned (nil before Init).
func (f *Framework) Config() *rest.Config { return f.cfg }

// SetupClient is a client of the admin config with the scheme.
func (f *Framework) SetupClient(scheme *k8sruntime.Scheme) (client.Client, error) {
	if f.cfg == nil {
		return nil, errors.New("framework: SetupClient before Init")
	}
	return client.New(f.cfg, client.Options{Scheme: scheme})
}

// Teardown stops kube-apiserver and etcd (nothing when Init did not start
// them).
func (f *Framework) Teardown() error {
	if f.env == nil {
		return nil
	}
	err := f.env.Stop()
	f.env, f.cfg = nil, nil
	return err
}

// AddUser provisions a user the API server authenticates by client
// certificate (envtest's AddUser): its Config holds only the RBAC its name
// and groups are bound to.
func (f *Framework) AddUser(u envtest.User) (*envtest.AuthenticatedUser, error) {
	if f.env == nil {
		return nil, errors.New("framework: AddUser before Init")
	}
	return f.env.AddUser(u, f.cfg)
}

// Identity is who a rest.Config from ConfigAs acts as: a user (with its
// groups) or a ServiceAccount.
type Identity struct {
	// User and Groups name a user; Groups may be empty.
	User   string
	Groups []string
	// ServiceAccountNamespace and ServiceAccount name a ServiceAccount
	// instead of a user (it must exist unless Impersonate is set).
	ServiceAccountNamespace, ServiceAccount string
	// Impersonate: the admin's credentials with impersonation headers,
	// instead of the identity's own (a client certificate for a user, a
	// TokenRequest token for a ServiceAccount). Both are authorized as the
	// identity; authenticating also exercises authentication itself.
	Impersonate bool
}

// ServiceAccountGroups are the groups the API server gives a ServiceAccount
// of namespace ns.
func ServiceAccountGroups(ns string) []string {
	return []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
}

// ConfigAs is a rest.Config that acts as id, with the admin config's QPS
// and Burst: a manager started with it holds only the RBAC bound to id.
func (f *Framework) ConfigAs(ctx context.Context, id Identity) (*rest.Config, error) {
	if f.cfg == nil {
		return nil, errors.New("framework: ConfigAs before Init")
	}
	sa := id.ServiceAccount != ""
	if sa == (id.User != "") {
		return nil, errors.New("framework: an Identity names either a User or a ServiceAccount")
	}
	var out *rest.Config
	switch {
	case id.Impersonate && sa:
		out = rest.CopyConfig(f.cfg)
		out.Impersonate = rest.ImpersonationConfig{
			UserName: "system:serviceaccount:" + id.ServiceAccountNamespace + ":" + id.ServiceAccount,
			Groups:   ServiceAccountGroups(id.ServiceAccountNamespace),
		}
	case id.Impersonate:
		out = rest.CopyConfig(f.cfg)
		out.Impersonate = rest.ImpersonationConfig{UserName: id.User, Groups: id.Groups}
	case sa:
		cs, err := kubernetes.NewForConfig(f.cfg)
		if err != nil {
			return nil, err
		}
		tr, err := cs.CoreV1().ServiceAccounts(id.ServiceAccountNamespace).CreateToken(ctx, id.ServiceAccount, &authnv1.TokenRequest{
			Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)}}, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("token of ServiceAccount %s/%s: %w", id.ServiceAccountNamespace, id.ServiceAccount, err)
		}
		out = &rest.Config{Host: f.cfg.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAData: f.cfg.CAData}}
	default:
		u, err := f.AddUser(envtest.User{Name: id.User, Groups: id.Groups})
		if err != nil {
			return nil, err
		}
		out = u.Config()
	}
	out.QPS, out.Burst = f.cfg.QPS, f.cfg.Burst
	return out, nil
}

// ManagerSetup wires the controllers under test into a manager.
type ManagerSetup func(ctx context.Context, mgr ctrl.Manager) error

// Manager is a started manager and the means to stop it.
type Manager struct {
	ctrl.Manager
	cancel context.CancelFunc
	done   chan error
}

// StartManager starts a manager on cfg (a Framework's admin config, one of
// its ConfigAs, or a wrapped one) with opts, after setup. The test defaults fill what opts leave
// unset: no metrics or health listener, and controller names that may
// repeat (a test restarts the manager in the same process).
func StartManager(cfg *rest.Config, opts ctrl.Options, setup ManagerSetup) (*Manager, error) {
	if opts.Metrics.BindAddress == "" {
		opts.Metrics = metricsserver.Options{BindAddress: "0"}
	}
	if opts.HealthProbeBindAddress == "" {
		opts.HealthProbeBindAddress = "0"
	}
	if opts.Controller.SkipNameValidation == nil {
		opts.Controller.SkipNameValidation = ptr.To(true)
	}
	mgr, err := ctrl.NewManager(cfg, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := setup(ctx, mgr); err != nil {
		cancel()
		return nil, err
	}
	m := &Manager{Manager: mgr, cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	return m, nil
}

// Stop stops the manager and waits for it; after 30 seconds it gives up
// and writes every goroutine's stack to a file the error names.
func (m *Manager) Stop() error {
	m.cancel()
	select {
	case err := <-m.done:
		return err
	case <-time.After(30 * time.Second):
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		path := filepath.Join(os.TempDir(), fmt.Sprintf("repot-manager-stop-%d.txt", time.Now().UnixNano()))
		_ = os.WriteFile(path, buf[:n], 0o644)
		return fmt.Errorf("manager did not stop in 30s (goroutines in %s)", path)
	}
}

// zapLevel logs errors only unless REPOT_TEST_VERBOSE is set.
func zapLevel() zapcore.Level {
	if os.Getenv("REPOT_TEST_VERBOSE") != "" {
		return zapcore.DebugLevel
	}
	return zapcore.ErrorLevel
}

// ManagerServiceAccount is the ServiceAccount the integration suites run
// the manager as, with the RBAC the project ships bound to it.
var ManagerServiceAccount = Identity{ServiceAccountNamespace: "repot-system", ServiceAccount: "repot-operator", Impersonate: true}

// ShippedManagerRole is the manager's ClusterRole as the project ships it:
// config/rbac/role.yaml, generated from the +kubebuilder:rbac markers (the
// chart installs the same rules from its files/manager-role.yaml, which a
// test keeps equal to it).
const ShippedManagerRole = "config/rbac/role.yaml"

// ConfigAsShippedManager creates ManagerServiceAccount, binds the shipped
// ClusterRole (ShippedManagerRole, under the name roleName) to it, and
// returns a config that impersonates it: a manager started with it holds
// exactly the permissions a user's cluster grants the operator, so a
// missing verb fails the test rather than an installation.
func (f *Framework) ConfigAsShippedManager(ctx context.Context, roleName string) (*rest.Config, error) {
	if f.cfg == nil {
		return nil, errors.New("framework: ConfigAsShippedManager before Init")
	}
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(ShippedManagerRole)))
	if err != nil {
		return nil, err
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(b, &role); err != nil {
		return nil, fmt.Errorf("%s: %w", ShippedManagerRole, err)
	}
	role.ObjectMeta = metav1.ObjectMeta{Name: roleName}
	cs, err := kubernetes.NewForConfig(f.cfg)
	if err != nil {
		return nil, err
	}
	id := ManagerServiceAccount
	if err := f.ensureServiceAccount(ctx, cs, id); err != nil {
		return nil, err
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create the shipped ClusterRole: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: roleName},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: roleName},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: id.ServiceAccountNamespace, Name: id.ServiceAccount}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	return f.ConfigAs(ctx, id)
}

// ShippedNamespacedRBAC is the manager's RBAC when it watches one namespace
// (config/namespaced/manager_role.yaml, split from ShippedManagerRole by
// `make manifests`; the chart's watchNamespace renders the same split): a
// Role and its RoleBinding in the namespace, and a ClusterRole of reads of
// cluster-scoped kinds with its ClusterRoleBinding.
const ShippedNamespacedRBAC = "config/namespaced/manager_role.yaml"

// ConfigAsShippedNamespacedManager is ConfigAsShippedManager for a manager
// that watches namespace ns alone, as the namespaced install runs it: as
// ServiceAccount repot-operator of ns, with the namespaced RBAC bound to it
// (the Role and RoleBinding in ns; the cluster-scoped objects named with
// prefix). It returns a config that impersonates that ServiceAccount.
func (f *Framework) ConfigAsShippedNamespacedManager(ctx context.Context, ns, prefix string) (*rest.Config, error) {
	if f.cfg == nil {
		return nil, errors.New("framework: ConfigAsShippedNamespacedManager before Init")
	}
	b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(ShippedNamespacedRBAC)))
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(f.cfg)
	if err != nil {
		return nil, err
	}
	id := Identity{ServiceAccountNamespace: ns, ServiceAccount: ManagerServiceAccount.ServiceAccount, Impersonate: true}
	if err := f.ensureServiceAccount(ctx, cs, id); err != nil {
		return nil, err
	}
	subject := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: id.ServiceAccountNamespace, Name: id.ServiceAccount}
	for _, doc := range strings.Split(string(b), "\n---\n") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			return nil, fmt.Errorf("%s: %w", ShippedNamespacedRBAC, err)
		}
		switch meta.Kind {
		case "":
			continue
		case "Role":
			var r rbacv1.Role
			if err := yaml.UnmarshalStrict([]byte(doc), &r); err != nil {
				return nil, fmt.Errorf("%s: %w", ShippedNamespacedRBAC, err)
			}
			r.ObjectMeta = metav1.ObjectMeta{Name: prefix + r.Name, Namespace: ns}
			if _, err := cs.RbacV1().Roles(ns).Create(ctx, &r, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		case "RoleBinding":
			var rb rbacv1.RoleBinding
			if err := yaml.UnmarshalStrict([]byte(doc), &rb); err != nil {
				return nil, fmt.Errorf("%s: %w", ShippedNamespacedRBAC, err)
			}
			rb.ObjectMeta = metav1.ObjectMeta{Name: prefix + rb.Name, Namespace: ns}
			rb.RoleRef.Name = prefix + rb.RoleRef.Name
			rb.Subjects = []rbacv1.Subject{subject}
			if _, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rb, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		case "ClusterRole":
			var cr rbacv1.ClusterRole
			if err := yaml.UnmarshalStrict([]byte(doc), &cr); err != nil {
				return nil, fmt.Errorf("%s: %w", ShippedNamespacedRBAC, err)
			}
			cr.ObjectMeta = metav1.ObjectMeta{Name: prefix + cr.Name}
			if _, err := cs.RbacV1().ClusterRoles().Create(ctx, &cr, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		case "ClusterRoleBinding":
			var crb rbacv1.ClusterRoleBinding
			if err := yaml.UnmarshalStrict([]byte(doc), &crb); err != nil {
				return nil, fmt.Errorf("%s: %w", ShippedNamespacedRBAC, err)
			}
			crb.ObjectMeta = metav1.ObjectMeta{Name: prefix + crb.Name}
			crb.RoleRef.Name = prefix + crb.RoleRef.Name
			crb.Subjects = []rbacv1.Subject{subject}
			if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, &crb, metav1.CreateOptions{}); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: unexpected kind %s", ShippedNamespacedRBAC, meta.Kind)
		}
	}
	return f.ConfigAs(ctx, id)
}

// ensureServiceAccount creates id's namespace and ServiceAccount unless
// they exist.
func (f *Framework) ensureServiceAccount(ctx context.Context, cs kubernetes.Interface, id Identity) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: id.ServiceAccountNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: id.ServiceAccount}}
	if _, err := cs.CoreV1().ServiceAccounts(id.ServiceAccountNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// WrappedClient is a manager's NewClient whose client (the cached one its
// reconcilers read the world through) wrap wraps, so that a test can make
// that cache lag the API server; nil when wrap is nil (the default client).
func WrappedClient(wrap func(client.Client) client.Client) client.NewClientFunc {
	if wrap == nil {
		return nil
	}
	return func(c *rest.Config, o client.Options) (client.Client, error) {
		cl, err := client.New(c, o)
		if err != nil {
			return nil, err
		}
		return wrap(cl), nil
	}
}

// ShippedAdmissionPolicies are the ValidatingAdmissionPolicies and their
// bindings as the kustomize installs ship them (config/admission; the
// chart renders the same, which charts/chart_test.go checks).
var ShippedAdmissionPolicies = []string{
	"config/admission/references.yaml",
	"config/admission/trust-remote-code.yaml",
	"config/admission/operator-writes.yaml",
}

// ShippedOperatorUsername is the operator's ServiceAccount as the
// kustomize installs name it, which the shipped policies exempt (the
// references policy) or confine (the operator-writes policy).
const ShippedOperatorUsername = "system:serviceaccount:repot-system:repot-operator-controller-manager"

// InstallShippedAdmissionPolicies creates ShippedAdmissionPolicies with
// the operator's username replaced by operator (the identity the test
// runs the manager as). Policies take effect a moment after they are
// created: the caller waits for a request one of them refuses. (Their
// status, with type-checking warnings, is written by kube-controller-
// manager, which envtest does not run.)
func (f *Framework) InstallShippedAdmissionPolicies(ctx context.Context, operator string) error {
	if f.cfg == nil {
		return errors.New("framework: InstallShippedAdmissionPolicies before Init")
	}
	cs, err := kubernetes.NewForConfig(f.cfg)
	if err != nil {
		return err
	}
	for _, path := range ShippedAdmissionPolicies {
		b, err := os.ReadFile(filepath.Join(f.root, filepath.FromSlash(path)))
		if err != nil {
			return err
		}
		if !strings.Contains(string(b), ShippedOperatorUsername) && !strings.Contains(path, "trust-remote-code") {
			return fmt.Errorf("%s does not name %s", path, ShippedOperatorUsername)
		}
		text := strings.ReplaceAll(string(b), ShippedOperatorUsername, operator)
		for _, doc := range strings.Split(text, "\n---\n") {
			var meta metav1.TypeMeta
			if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			switch meta.Kind {
			case "ValidatingAdmissionPolicy":
				var p admissionregistrationv1.ValidatingAdmissionPolicy
				if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, &p, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
			case "ValidatingAdmissionPolicyBinding":
				var b admissionregistrationv1.ValidatingAdmissionPolicyBinding
				if err := yaml.UnmarshalStrict([]byte(doc), &b); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				if _, err := cs.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{}); err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
			default:
				return fmt.Errorf("%s: unexpected kind %q", path, meta.Kind)
			}
		}
	}
	return nil
}
