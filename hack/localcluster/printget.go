package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// printGet prints `kubectl get reval` with kubectl when it is installed, and
// the same table from the API server otherwise.
func printGet(ctx context.Context, cfg *rest.Config, mapper *restmapper.DeferredDiscoveryRESTMapper, disc discovery.CachedDiscoveryInterface, kubeconfig, ns string, out io.Writer) error {
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		fmt.Fprintf(out, "$ kubectl get reval -n %s\n", ns)
		cmd := exec.CommandContext(ctx, kubectl, "get", "reval", "-n", ns)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		cmd.Stdout, cmd.Stderr = out, out
		if cmd.Run() == nil {
			return nil
		}
	}
	fmt.Fprintf(out, "$ localcluster get reval -n %s   (kubectl is not installed; the same table from the API server)\n", ns)
	mapper.Reset()
	return getTable(ctx, cfg, restmapper.NewShortcutExpander(mapper, disc, nil), "reval", "", ns, false, out)
}
