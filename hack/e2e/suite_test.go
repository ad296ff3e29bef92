//go:build e2e

// Package e2e runs end-to-end tests on the local cluster (hack/localcluster):
// a real control plane and a real node (kubelet, containerd, runc, the CNI
// bridge, kube-proxy, CoreDNS, kube-network-policies; SIMULATED GPUs through
// a device plugin), evaluations of simulated models, every pod a container
// of the image built from the Dockerfile, and the operator installed from
// the chart (startRealCluster). A real node needs root: without it every
// spec skips and says why. Run with `make e2e` (which builds bin/ first).
package e2e

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// settings of the run, from the environment `make e2e` sets.
var (
	binDir   = envOr("REPOT_E2E_BIN", "../../bin")
	stateDir = envOr("REPOT_E2E_STATE", "../../bin/e2e-state")
	rootDir  = envOr("REPOT_E2E_ROOT", "../..")
)

func envOr(k, def string) string {
	v := os.Getenv(k)
	if v == "" {
		v = def
	}
	abs, err := filepath.Abs(v)
	if err != nil {
		panic(err)
	}
	return abs
}

func TestE2E(t *testing.T) {
	for _, b := range []string{"repot", "localcluster", "kubectl", "helm", "etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"} {
		if _, err := os.Stat(filepath.Join(binDir, b)); err != nil {
			t.Fatalf("%v: run `make e2e` (it builds bin/ first)", err)
		}
	}
	RegisterFailHandler(Fail)
	// The test's clients log through Ginkgo (shown with a failing spec),
	// not controller-runtime's "SetLogger was never called" warning.
	logf.SetLogger(GinkgoLogr)
	RunSpecs(t, "repot-operator end to end on the local cluster")
}
