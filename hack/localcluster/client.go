package main

import (
	"os"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
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

func (c *clientFlags) config() (*rest.Config, error) {
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
	return cfg, nil
}

func (c *clientFlags) clients() (*rest.Config, dynamic.Interface, *restmapper.DeferredDiscoveryRESTMapper, discovery.CachedDiscoveryInterface, error) {
	cfg, err := c.config()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	disc := memory.NewMemCacheClient(dc)
	return cfg, dyn, restmapper.NewDeferredDiscoveryRESTMapper(disc), disc, nil
}
