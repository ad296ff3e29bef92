package integration_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"repot.dev/repot-operator/controllers"
	"repot.dev/repot-operator/controllers/integration/framework"
)

// The manager's metrics, served as `repot manager` serves them by default
// (--metrics-secure): HTTPS, and only to a caller the API server
// authenticates and authorizes for GET /metrics. The manager runs as the
// operator's ServiceAccount with the metrics-auth ClusterRole the installs
// ship bound to it (config/rbac/common/metrics_auth_role.yaml).
var _ = Describe("the manager's metrics", func() {
	It("answer only a caller bound to the metrics-reader role", func() {
		b, err := os.ReadFile(filepath.Join(testEnv.Root(), "config", "rbac", "common", "metrics_auth_role.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var auth rbacv1.ClusterRole
		Expect(yaml.Unmarshal([]byte(strings.Split(string(b), "\n---\n")[0]), &auth)).To(Succeed())
		auth.ObjectMeta = metav1.ObjectMeta{Name: "test-metrics-auth"}
		Expect(k8s.Create(ctx, &auth)).To(Succeed())
		id := framework.ManagerServiceAccount
		Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-auth"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: auth.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: id.ServiceAccountNamespace, Name: id.ServiceAccount}},
		})).To(Succeed())
		b, err = os.ReadFile(filepath.Join(testEnv.Root(), "config", "rbac", "common", "metrics_reader_role.yaml"))
		Expect(err).NotTo(HaveOccurred())
		var reader rbacv1.ClusterRole
		Expect(yaml.Unmarshal(b, &reader)).To(Succeed())
		reader.ObjectMeta = metav1.ObjectMeta{Name: "test-metrics-reader"}
		Expect(k8s.Create(ctx, &reader)).To(Succeed())

		// Two callers: a scraper bound to metrics-reader, and a stranger.
		ns := createNamespace("metrics")
		token := func(name string) string {
			cs, err := kubernetes.NewForConfig(cfg)
			Expect(err).NotTo(HaveOccurred())
			Expect(k8s.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}})).To(Succeed())
			tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authnv1.TokenRequest{
				Spec: authnv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
			Expect(err).NotTo(HaveOccurred())
			return tr.Status.Token
		}
		scraper, stranger := token("scraper"), token("stranger")
		Expect(k8s.Create(ctx, &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "test-metrics-scraper"},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: reader.Name},
			Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: "scraper"}},
		})).To(Succeed())

		l, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr := l.Addr().String()
		Expect(l.Close()).To(Succeed())
		m, err := framework.StartManager(managerCfg, ctrl.Options{Metrics: controllers.MetricsServerOptions(addr, true)},
			func(context.Context, ctrl.Manager) error { return nil })
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(m.Stop)

		httpc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the manager's certificate is self-signed
		get := func(bearer string) (int, string, error) {
			req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
			if err != nil {
				return 0, "", err
			}
			if bearer != "" {
				req.Header.Set("Authorization", "Bearer "+bearer)
			}
			resp, err := httpc.Do(req)
			if err != nil {
				return 0, "", err
			}
			defer func() { _ = resp.Body.Close() }()
			body, err := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body), err
		}
		Eventually(func() error { _, _, err := get(""); return err }).Should(Succeed(), "the metrics server serves HTTPS")
		Eventually(func() (string, error) {
			code, body, err := get(scraper)
			return fmt.Sprint(code) + " " + body, err
		}).Should(And(HavePrefix("200 "), ContainSubstring("# TYPE")))
		// Refused: 401 without a token, 403 when not authorized; a token
		// the API server does not know fails the TokenReview, which
		// controller-runtime's filter answers with 500. None gets metrics.
		for who, bearer := range map[string]string{"no token": "", "a stranger": stranger, "a made-up token": "not-a-token"} {
			code, body, err := get(bearer)
			Expect(err).NotTo(HaveOccurred())
			Expect(code).To(BeElementOf(http.StatusUnauthorized, http.StatusForbidden, http.StatusInternalServerError), who)
			Expect(body).NotTo(ContainSubstring("# TYPE"), who)
		}
		code, _, err := get(stranger)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusForbidden), "an authenticated caller without the reader role")
		// Plain HTTP gets nothing.
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			_ = resp.Body.Close()
			Expect(resp.StatusCode).NotTo(Equal(http.StatusOK))
		}
	})
})
