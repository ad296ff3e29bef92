// Command localcluster runs a real Kubernetes control plane on loopback and
// a real node (kubelet, containerd, runc, the CNI plugins, kube-proxy,
// CoreDNS, kube-network-policies; SIMULATED GPUs through a device plugin):
// what `make demo` and `make e2e` use on a Linux machine (as root) without
// a cluster, Docker or a GPU.
//
//	localcluster up [--nodes 1] [--gpus 2] [--dir bin/localcluster-state]  # foreground until SIGINT/SIGTERM
//	localcluster wait|down|env [--dir D]
//	localcluster report [NAME] [-n NS]                      # the evaluations' status tables
//	localcluster demo                                        # what `make demo` runs
//
// Everything else is the real kubectl and helm (bin/kubectl, bin/helm).
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// defaultDir is the state dir when --dir is not given.
const defaultDir = "bin/localcluster-state"

var constructors []func() *cobra.Command

func register(f func() *cobra.Command) { constructors = append(constructors, f) }

func main() {
	root := &cobra.Command{
		Use:           "localcluster",
		Short:         "A local Kubernetes cluster (control plane and a real node) for repot-operator",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, f := range constructors {
		root.AddCommand(f())
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "localcluster:", err)
		os.Exit(1)
	}
}
