package repot

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"repot.dev/repot-operator/runner/ledger"
)

func init() { register(newLedgerCommand) }

// ledgerFlags are the flags every ledger subcommand takes.
type ledgerFlags struct {
	namespace string
	configMap string
	spills    int
	file      string
	client    ledger.ClientOptions
}

func (f *ledgerFlags) register(c *cobra.Command) {
	fl := c.Flags()
	fl.StringVar(&f.namespace, "namespace", os.Getenv("POD_NAMESPACE"), "namespace of the ledger ConfigMap (default $POD_NAMESPACE)")
	fl.StringVar(&f.configMap, "configmap", "", "name of the ledger ConfigMap (required)")
	fl.IntVar(&f.spills, "spills", 0, "number of spill ConfigMaps after the ledger (<configmap>-1 .. <configmap>-N) that take its records once it is full")
	fl.StringVar(&f.file, "file", "", "records file (JSONL of run records)")
	fl.StringVar(&f.client.TokenFile, "token-file", ledger.DefaultTokenFile, "service account token file (a projected token volume); used with $KUBERNETES_SERVICE_HOST/PORT or --server")
	fl.StringVar(&f.client.CAFile, "ca-file", ledger.DefaultCAFile, "CA bundle of the API server")
	fl.StringVar(&f.client.Server, "server", "", "API server URL (default https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
	fl.StringVar(&f.client.Kubeconfig, "kubeconfig", "", "kubeconfig used when no token file is usable (default $KUBECONFIG or ~/.kube/config)")
}

// store validates the flags and connects to the API server.
func (f *ledgerFlags) store() (*ledger.Store, error) {
	if f.namespace == "" {
		return nil, fmt.Errorf("--namespace is required (or set POD_NAMESPACE)")
	}
	if f.configMap == "" {
		return nil, fmt.Errorf("--configmap is required")
	}
	if f.spills < 0 {
		return nil, fmt.Errorf("--spills must not be negative")
	}
	if f.file == "" {
		return nil, fmt.Errorf("--file is required")
	}
	cfg, err := ledger.RestConfig(f.client, os.Getenv)
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &ledger.Store{Client: cs.CoreV1().ConfigMaps(f.namespace), Name: f.configMap, Spills: f.spills}, nil
}

func newLedgerCommand() *cobra.Command {
	c := &cobra.Command{
		Use:   "ledger",
		Short: "Copy a runner shard's records between a file and its ledger ConfigMap",
		Long: `The ledger of a runner shard is a ConfigMap (data key records.jsonl, one run
record per line) that the operator creates and folds into the evaluation's status,
with --spills spill ConfigMaps <configmap>-1, <configmap>-2, ... that take the
records once the ledger is full (a ConfigMap holds at most 1 MiB).
A runner pod runs "ledger restore" as an init container and "ledger sync" as a
native sidecar; they are the only containers that see the service account token.`,
	}
	c.AddCommand(newLedgerRestoreCommand(), newLedgerSyncCommand())
	return c
}
