package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
)

// KueueModule is the Go module of Kueue; its version is the one go.mod pins
// (the operator uses its API types, hack/build-cluster-bins.sh kueue builds its manager).
const KueueModule = "sigs.k8s.io/kueue"

// KueueNamespace is where the Kueue manager keeps its certificate secret.
const KueueNamespace = "kueue-system"

// kueueWebhookSecret holds the certificates Kueue generates for itself.
const kueueWebhookSecret = "kueue-webhook-server-cert"

// kueueConversionCRDs are the CRDs whose conversion webhook Kueue's internal
// certificate management injects its CA into; it waits until all of them
// have a webhook client config.
var kueueConversionCRDs = []string{"localqueues", "clusterqueues", "workloads", "cohorts", "multikueueclusters"}

// KueueOptions configures the Kueue manager of the local cluster.
type KueueOptions struct {
	// Bin is the manager binary (hack/build-cluster-bins.sh kueue builds bin/kueue).
	Bin string
	// Version of sigs.k8s.io/kueue whose CRDs are installed; empty means
	// the version this program was built with.
	Version string
	Log     io.Writer
	// WaitForPodsReady, when above zero, turns on Kueue's waitForPodsReady
	// with this timeout (and the same recovery timeout), as GPU pools
	// configure it for all-or-nothing admission: an admitted Workload whose
	// PodsReady condition is not True within it is evicted.
	WaitForPodsReady time.Duration
}

// KueueTarget is the API server the manager runs against.
type KueueTarget struct {
	// Admin is a cluster-admin client config (CRDs, namespace, secret).
	Admin *rest.Config
	// Kubeconfig is the manager's kubeconfig file.
	Kubeconfig string
	// Dir holds the manager's configuration and certificates; LogPath its
	// output.
	Dir, LogPath string
}

// Kueue is a running Kueue manager.
type Kueue struct {
	c *component
}

// KueueVersion is the sigs.k8s.io/kueue version this program was built
// with.
func KueueVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == KueueModule {
				return d.Version
			}
		}
	}
	return ""
}

// StartKueue installs Kueue's CRDs (from the Go module cache) and runs the
// real Kueue manager as a process of the local cluster, with its own
// configuration: no leader election, internal certificates, its webhook
// server on a free loopback port. The API server is not told about Kueue's
// admission webhooks (it could not verify the webhook service's certificate
// on loopback), so objects are not defaulted or validated by Kueue's
// webhooks; the operator creates complete Workloads. Conversion webhooks are
// registered (Kueue's certificate manager needs them) but never called: every
// client uses the storage version v1beta2.
func (cp *ControlPlane) StartKueue(ctx context.Context, o KueueOptions) (*Kueue, error) {
	return StartKueue(ctx, o, KueueTarget{Admin: cp.Admin, Kubeconfig: cp.Layout.Kubeconfig(),
		Dir: filepath.Join(cp.Layout.Dir, "kueue"), LogPath: cp.Layout.Log("kueue")})
}

// StartKueue is ControlPlane.StartKueue against any API server (the
// controller tests run it against envtest's).
func StartKueue(ctx context.Context, o KueueOptions, t KueueTarget) (*Kueue, error) {
	if _, err := os.Stat(o.Bin); err != nil {
		return nil, fmt.Errorf("kueue: %w (build it with: hack/build-cluster-bins.sh kueue)", err)
	}
	if o.Version == "" {
		o.Version = KueueVersion()
	}
	// (Still empty in a test binary: kueueCRDDir asks the module.)
	t0 := time.Now()
	crdDir, err := kueueCRDDir(ctx, o.Version)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	if err := installKueueCRDs(ctx, t.Admin, crdDir, ports[0]); err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(t.Admin)
	if err != nil {
		return nil, err
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: KueueNamespace}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kueue namespace: %w", err)
	}
	// The certificate manager fills this Secret; it must exist (Kueue's
	// manifests create it empty too).
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: kueueWebhookSecret, Namespace: KueueNamespace}}
	if _, err := cs.CoreV1().Secrets(KueueNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kueue webhook secret: %w", err)
	}
	dir := t.Dir
	certs := filepath.Join(dir, "certs")
	if err := os.RemoveAll(certs); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(certs, 0o700); err != nil {
		return nil, err
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(kueueConfig(ports[0], ports[1], certs, o.WaitForPodsReady)), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "kueue %s: CRDs installed from the module cache, starting the manager...\n", o.Version)
	c, err := startComponent("kueue", o.Bin, []string{"--config", config, "--kubeconfig", t.Kubeconfig,
		"--feature-gates", "VisibilityOnDemand=false"}, t.LogPath)
	if err != nil {
		return nil, err
	}
	k := &Kueue{c: c}
	// Kueue's certificate manager writes its certificates into the Secret
	// and expects them mounted in its certificate dir, as a kubelet would;
	// the local cluster plays that part.
	if err := mountKueueCerts(ctx, cs, certs, c, 3*time.Minute); err != nil {
		k.Stop()
		return nil, err
	}
	if err := waitHTTP(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[1]), c, 3*time.Minute); err != nil {
		k.Stop()
		return nil, err
	}
	fmt.Fprintf(o.Log, "kueue %s ready (%v)\n", o.Version, time.Since(t0).Round(100*time.Millisecond))
	return k, nil
}

// Failed returns an error when the manager has exited.
func (k *Kueue) Failed() error {
	if k == nil || k.c.alive() {
		return nil
	}
	return k.c.failure()
}

// Stop stops the manager.
func (k *Kueue) Stop() {
	if k != nil {
		k.c.stop(10 * time.Second)
	}
}

// kueueConfig is the manager's Configuration (config.kueue.x-k8s.io).
func kueueConfig(webhookPort, healthPort int, certDir string, waitForPodsReady time.Duration) string {
	wait := ""
	if waitForPodsReady > 0 {
		wait = fmt.Sprintf(`waitForPodsReady:
  timeout: %s
  recoveryTimeout: %s
  blockAdmission: false
  requeuingStrategy:
    timestamp: Eviction
    backoffBaseSeconds: 5
`, waitForPodsReady, waitForPodsReady)
	}
	return wait + fmt.Sprintf(`apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: %s
health:
  healthProbeBindAddress: 127.0.0.1:%d
metrics:
  bindAddress: "0"
webhook:
  host: 127.0.0.1
  port: %d
  certDir: %s
leaderElection:
  leaderElect: false
internalCertManagement:
  enable: true
  webhookServiceName: kueue-webhook-service
  webhookSecretName: %s
clientConnection:
  qps: 50
  burst: 100
integrations:
  frameworks:
  - batch/job
`, KueueNamespace, healthPort, webhookPort, certDir, kueueWebhookSecret)
}

// kueueCRDDir finds the CRDs of a Kueue version in the Go module cache,
// downloading the module through the module proxy when missing.
func kueueCRDDir(ctx context.Context, version string) (string, error) {
	var cmd *exec.Cmd
	if version != "" {
		cmd = exec.CommandContext(ctx, "go", "mod", "download", "-json", KueueModule+"@"+version)
		cmd.Dir = os.TempDir()
	} else {
		// No version in the build info (a test binary): the module this
		// program runs in pins it.
		cmd = exec.CommandContext(ctx, "go", "list", "-m", "-json", KueueModule)
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kueue: %s: %v: %s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out.Bytes(), &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("kueue: %s printed no module dir (run: go mod download %s): %s", strings.Join(cmd.Args, " "), KueueModule, out.String())
	}
	return filepath.Join(mod.Dir, "config", "components", "crd", "bases"), nil
}

// installKueueCRDs creates (or replaces) Kueue's CRDs and waits until they
// are established. The CRDs Kueue converts get a webhook conversion to the
// manager's webhook port, as Kueue's own manifests have.
func installKueueCRDs(ctx context.Context, cfg *rest.Config, dir string, webhookPort int) error {
	cs, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("kueue: no CRDs in %s", dir)
	}
	sort.Strings(files)
	crds := cs.ApiextensionsV1().CustomResourceDefinitions()
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096).Decode(crd); err != nil {
			return fmt.Errorf("kueue: %s: %w", f, err)
		}
		for _, plural := range kueueConversionCRDs {
			if crd.Spec.Names.Plural == plural {
				crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
					Strategy: apiextensionsv1.WebhookConverter,
					Webhook: &apiextensionsv1.WebhookConversion{
						ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: ptr.To(fmt.Sprintf("https://127.0.0.1:%d/convert", webhookPort))},
						ConversionReviewVersions: []string{"v1"},
					},
				}
			}
		}
		old, err := crds.Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			_, err = crds.Create(ctx, crd, metav1.CreateOptions{})
		case err == nil:
			crd.ResourceVersion = old.ResourceVersion
			_, err = crds.Update(ctx, crd, metav1.UpdateOptions{})
		}
		if err != nil {
			return fmt.Errorf("kueue: CRD %s: %w", crd.Name, err)
		}
		names = append(names, crd.Name)
	}
	deadline := time.Now().Add(time.Minute)
	for _, n := range names {
		for {
			crd, err := crds.Get(ctx, n, metav1.GetOptions{})
			if err == nil && established(crd) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("kueue: CRD %s not established after a minute (%v)", n, err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
}

func waitHTTP(ctx context.Context, url string, c *component, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		last = err
		if !c.alive() {
			return c.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v (%v); log %s:\n%s", c.name, timeout, last, c.log, tail(c.log, 15))
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// mountKueueCerts waits until Kueue has filled its certificate Secret and
// writes tls.crt and tls.key into dir.
func mountKueueCerts(ctx context.Context, cs kubernetes.Interface, dir string, c *component, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		s, err := cs.CoreV1().Secrets(KueueNamespace).Get(ctx, kueueWebhookSecret, metav1.GetOptions{})
		if err == nil && len(s.Data["tls.crt"]) > 0 && len(s.Data["tls.key"]) > 0 {
			for _, name := range []string{"tls.crt", "tls.key", "ca.crt"} {
				if err := os.WriteFile(filepath.Join(dir, name), s.Data[name], 0o600); err != nil {
					return err
				}
			}
			return nil
		}
		if !c.alive() {
			return c.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kueue: its certificate Secret %s/%s was not filled after %v (%v); log %s:\n%s", KueueNamespace, kueueWebhookSecret, timeout, err, c.log, tail(c.log, 15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
