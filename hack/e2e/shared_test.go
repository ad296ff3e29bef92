//go:build e2e

package e2e

import (
	. "github.com/onsi/ginkgo/v2"
)

// The suites that need nothing of a cluster but the operator installed from
// the chart share one: a real node with four SIMULATED GPUs (the sweep's
// four models; the demo's two and the faults evaluation), its namespaces a
// shared pool's (sharedPool). Each suite leaves nothing running behind it,
// and they run in the order below (the tenant suite, which cordons the
// node, last). A spec that fails does not stop the suites after it
// (ContinueOnFailure; a failed BeforeAll still skips the rest, as Ginkgo
// does in an Ordered container). Each cluster costs a boot (about 33s to
// ready on two cores), the chart's install and a stop: the suites whose
// cluster differs (the real node's own checks, the Helm
// upgrade from the previous chart, the local store as the chart's default,
// Kueue) start their own.
var _ = Describe("on one shared local cluster", Ordered, ContinueOnFailure, func() {
	var tc *testCluster
	BeforeAll(func() {
		tc = startRealCluster("shared", "--gpus", "4")
		DeferCleanup(func() { tc.stop() })
	})
	cluster := func() *testCluster { return tc }
	mainSpecs(cluster)
	recreateSpecs(cluster)
	artifactsSpecs(cluster)
	derailSpecs(cluster)
	paperSpecs(cluster)
	scheduleSpecs(cluster)
	sweepSpecs(cluster)
	tenantSpecs(cluster)
})
