package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// clientFlags selects the cluster: --kubeconfig, else $KUBECONFIG, else the
// kubeconfig in --dir.
type clientFlags struct {
	kubeconfig, dir, namespace string
}

func (c *clientFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.kubeconfig, "kubeconfig", "", "kubeconfig (default $KUBECONFIG, else the local cluster's)")
	cmd.Flags().StringVar(&c.dir, "dir", defaultDir, "state dir of the local cluster")
	cmd.Flags().StringVarP(&c.namespace, "namespace", "n", "default", "namespace")
}

// dynamic returns a dynamic client for the selected cluster.
func (c *clientFlags) dynamic() (dynamic.Interface, error) {
	path := c.kubeconfig
	if path == "" {
		path = os.Getenv("KUBECONFIG")
	}
	if path == "" {
		l, err := layoutOf(c.dir)
		if err != nil {
			return nil, err
		}
		path = l.Kubeconfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	return dynamic.NewForConfig(cfg)
}
