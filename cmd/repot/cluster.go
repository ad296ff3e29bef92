package repot

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"repot.dev/repot-operator/artifacts"
	"repot.dev/repot-operator/cmd/repot/results"
	"repot.dev/repot-operator/controllers"
)

// clusterFlags are the flags of commands that read from a cluster.
type clusterFlags struct {
	kubeconfig, namespace string
}

func (f *clusterFlags) client() (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if f.kubeconfig != "" {
		rules.ExplicitPath = f.kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("kubeconfig: %w", err)
	}
	ns := f.namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", err
		}
	}
	scheme, err := controllers.NewScheme()
	if err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}

// storeFlags are the flags of commands that read an evaluation's traces from
// its artifact store.
type storeFlags struct {
	// endpoint replaces the endpoint status.artifacts names: the store as
	// the caller reaches it from outside the cluster (a port-forward, an
	// ingress, the local cluster's store pod).
	endpoint string
}

func (f *storeFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.endpoint, "store-endpoint", "", "the artifact store's host:port as reached from here, instead of the in-cluster endpoint status.artifacts names (e.g. localhost:9000 through kubectl port-forward); the bucket, keys and TLS setting stay the status's")
}

// open opens evaluation's stored traces with the caller's credentials
// (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, else the ambient identity),
// warning on errw when the upload is not complete.
func (f *storeFlags) open(ctx context.Context, errw io.Writer, c client.Reader, namespace, evaluation string) (*results.StoredTraces, error) {
	creds, err := artifacts.CredentialsFromEnv()
	if err != nil {
		return nil, err
	}
	st, err := results.OpenStoredTraces(ctx, c, namespace, evaluation, creds, f.endpoint)
	if err != nil {
		return nil, err
	}
	if w := st.Warning(); w != "" {
		fmt.Fprintf(errw, "warning: %s; reading what is there\n", w)
	}
	return st, nil
}
