package ledger

import (
	"fmt"
	"net"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Default paths of a service account token volume.
const (
	DefaultTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	DefaultCAFile    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"
)

// ClientOptions say how to reach the API server.
type ClientOptions struct {
	// TokenFile is a (projected) service account token. Used when it exists
	// and the API server's address is known; re-read as it rotates.
	TokenFile string
	// CAFile is the API server's CA bundle; empty uses the system roots.
	CAFile string
	// Server overrides the API server URL; default
	// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT.
	Server string
	// Kubeconfig is the fallback when no token is usable; empty means
	// $KUBECONFIG or ~/.kube/config.
	Kubeconfig string
}

// RestConfig builds the client configuration: the token file with the
// in-cluster address when both are available, else the kubeconfig. getenv
// is os.Getenv outside tests.
func RestConfig(o ClientOptions, getenv func(string) string) (*rest.Config, error) {
	server := o.Server
	if server == "" {
		if host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT"); host != "" && port != "" {
			server = "https://" + net.JoinHostPort(host, port)
		}
	}
	if o.TokenFile != "" && server != "" {
		if _, err := os.Stat(o.TokenFile); err == nil {
			cfg := &rest.Config{Host: server, BearerTokenFile: o.TokenFile}
			if o.CAFile != "" {
				if _, err := os.Stat(o.CAFile); err != nil {
					return nil, fmt.Errorf("--ca-file: %w", err)
				}
				cfg.TLSClientConfig.CAFile = o.CAFile
			}
			cfg.UserAgent = "repot-ledger"
			return cfg, nil
		}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("no usable token file (%q) with a known API server, and no kubeconfig: %w", o.TokenFile, err)
	}
	cfg.UserAgent = "repot-ledger"
	return cfg, nil
}
