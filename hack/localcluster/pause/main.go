// Command pause is the local cluster's pod sandbox process, a stand-in for
// registry.k8s.io/pause (no registry is reachable here): it holds the pod's
// namespaces, sleeping until SIGTERM or SIGINT. Built static (CGO_ENABLED=0)
// into the image localhost/repot-local/pause by the real node
// (cluster.StartRealNode).
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
