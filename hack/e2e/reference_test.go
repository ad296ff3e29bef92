//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"repot.dev/repot-operator/analysis/summary"
	"repot.dev/repot-operator/hack/localcluster/proc"
)

// reference runs `repot run` outside the cluster on the same suite, methods
// and sampling flags as a runner Job (its args, minus sharding and paths)
// against a local `repot sim-server` with the same profile and seed, and
// returns the summary it writes.
type reference struct {
	done chan struct{}
	sum  summary.Summary
	err  error
	log  string
}

// startReference starts the reference run in the background. jobArgs are the
// args of the runner container of the model's Job; ip is a loopback address
// of its own for the simulated server.
func startReference(name string, jobArgs []string, profile string, seed int64, served, ip string) *reference {
	r := &reference{done: make(chan struct{}), log: filepath.Join(stateDir, "test-logs", "reference-"+name+".log")}
	go func() {
		defer close(r.done)
		r.sum, r.err = runReference(name, jobArgs, profile, seed, served, ip, r.log)
	}()
	return r
}

func (r *reference) wait(timeout time.Duration) (summary.Summary, error) {
	select {
	case <-r.done:
		return r.sum, r.err
	case <-time.After(timeout):
		return summary.Summary{}, fmt.Errorf("reference run not done after %v; log %s", timeout, r.log)
	}
}

func runReference(name string, jobArgs []string, profile string, seed int64, served, ip, logPath string) (summary.Summary, error) {
	var sum summary.Summary
	port, err := freePort(ip)
	if err != nil {
		return sum, err
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return sum, err
	}
	dir := filepath.Join(stateDir, "reference", name)
	if err := os.RemoveAll(dir); err != nil {
		return sum, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return sum, err
	}
	defer logf.Close()
	listen := net.JoinHostPort(ip, strconv.Itoa(port))
	srv := exec.Command(filepath.Join(binDir, "repot"), "sim-server", "--listen", listen, "--profile", profile,
		"--seed", strconv.FormatInt(seed, 10), "--served-model-name", served, "--latency-scale", "0")
	srv.Stdout, srv.Stderr = logf, logf
	if err := proc.Start(srv); err != nil {
		return sum, err
	}
	exited := make(chan struct{})
	go func() { _ = srv.Wait(); close(exited) }()
	defer proc.Stop(srv.Process.Pid, exited, 5*time.Second)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", listen); err == nil {
			c.Close()
			break
		}
		if i > 200 {
			return sum, fmt.Errorf("reference sim-server not listening on %s", listen)
		}
		time.Sleep(100 * time.Millisecond)
	}
	args := referenceArgs(jobArgs, "http://"+listen+"/v1", dir)
	run := exec.Command(filepath.Join(binDir, "repot"), args...)
	run.Stdout, run.Stderr = logf, logf
	fmt.Fprintf(logf, "reference: repot %s\n", strings.Join(args, " "))
	// In its own process group and killed with the test binary, like
	// everything else the tests start.
	if err := proc.Start(run); err != nil {
		return sum, err
	}
	if err := run.Wait(); err != nil {
		return sum, fmt.Errorf("repot run: %v (log %s)", err, logPath)
	}
	data, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		return sum, err
	}
	return sum, json.Unmarshal(data, &sum)
}

// referenceArgs rewrites a runner's `repot run` args for a local run: one
// shard, the local server, a local output dir, and no ledger-sync sidecar
// to hand off to (--await-ledger).
func referenceArgs(jobArgs []string, baseURL, out string) []string {
	var args []string
	for i := 0; i < len(jobArgs); i++ {
		a := jobArgs[i]
		name, _, hasValue := strings.Cut(a, "=")
		switch name {
		case "--shard-index", "--shard-count", "--base-url", "--out", "--traces", "--gpu-telemetry-url", "--await-ledger":
			if !hasValue {
				i++ // skip the separate value
			}
			continue
		}
		args = append(args, a)
	}
	return append(args, "--base-url", baseURL, "--out", out)
}

func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
