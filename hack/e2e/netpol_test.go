//go:build e2e

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/gomega"
)

// metadataStandIn is a stand-in for a cloud's instance-metadata endpoint:
// an HTTP server at 169.254.169.254:443 in its own network namespace,
// reached from the host through a veth pair, so that a pod's packets to it
// are forwarded (and pass the NetworkPolicy enforcer) as they would be to a
// metadata server off the node.
type metadataStandIn struct {
	server *child
}

const (
	metadataNetns = "repot-e2e-metadata"
	metadataHost  = "repot-md0"
	metadataPeer  = "repot-md1"
	metadataIP    = "169.254.169.254"
)

func startMetadataStandIn(logDir string) *metadataStandIn {
	md := &metadataStandIn{}
	md.cleanup() // of a run that was killed
	for _, args := range [][]string{
		{"netns", "add", metadataNetns},
		{"link", "add", metadataHost, "type", "veth", "peer", "name", metadataPeer},
		{"link", "set", metadataPeer, "netns", metadataNetns},
		{"addr", "add", "169.254.169.253/30", "dev", metadataHost},
		{"link", "set", metadataHost, "up"},
		{"-n", metadataNetns, "addr", "add", metadataIP + "/30", "dev", metadataPeer},
		{"-n", metadataNetns, "link", "set", metadataPeer, "up"},
		{"-n", metadataNetns, "link", "set", "lo", "up"},
		{"-n", metadataNetns, "route", "add", "default", "via", "169.254.169.253"},
	} {
		out, err := exec.Command("ip", args...).CombinedOutput()
		Expect(err).NotTo(HaveOccurred(), "ip %s: %s", strings.Join(args, " "), out)
	}
	Expect(os.MkdirAll(logDir, 0o755)).To(Succeed())
	md.server = startChild("metadata stand-in", filepath.Join(logDir, "metadata.log"), nil,
		"ip", "netns", "exec", metadataNetns, "python3", "-m", "http.server", "--bind", metadataIP, "443")
	return md
}

func (md *metadataStandIn) cleanup() {
	if md.server != nil {
		md.server.kill()
	}
	_ = exec.Command("ip", "link", "del", metadataHost).Run()
	_ = exec.Command("ip", "netns", "del", metadataNetns).Run()
}

// probeScript connects to each NAME,HOST,PORT of its arguments with TCP and
// prints "NAME reached" or "NAME blocked: ...". It waits first, so that the
// enforcer has seen the pod's address (kube-network-policies learns pod
// addresses from the API server; a connection before that is not decided).
const probeScript = `
import socket, sys, time
time.sleep(5)
for spec in sys.argv[1:]:
    name, host, port = spec.split(",")
    try:
        socket.create_connection((host, int(port)), timeout=4).close()
        print(name, "reached", flush=True)
    except Exception as e:
        print(name, "blocked:", type(e).__name__, e, flush=True)
`
