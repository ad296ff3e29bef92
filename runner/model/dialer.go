package model

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// HostsFileEnv names the environment variable that points at an
// /etc/hosts-format file the client's dialer resolves names through.
const HostsFileEnv = "REPOT_HOSTS_FILE"

// NewTransport is the HTTP transport of the model client: keep-alive pools
// sized for many concurrent calls, and a dialer that resolves names through
// the file named by REPOT_HOSTS_FILE when it is set (re-read on every dial,
// falling back to normal resolution for names it does not list).
func NewTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 512
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	t.DialContext = HostsDialer(d.DialContext, os.Getenv)
	return t
}

// DialFunc is net.Dialer.DialContext's signature.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// HostsDialer wraps dial so that a host name listed in the hosts file named
// by getenv(HostsFileEnv) is replaced by its address before dialing. A
// cluster Service name (ending in .svc or .svc.cluster.local) that the file
// does not list fails as not found instead of going to the host's DNS
// resolver: the file is the cluster's DNS, and the host's resolver (often at
// a private-range address) cannot know the name anyway.
func HostsDialer(dial DialFunc, getenv func(string) string) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if path := getenv(HostsFileEnv); path != "" {
			if host, port, err := net.SplitHostPort(addr); err == nil && net.ParseIP(host) == nil {
				if ip, ok := LookupHostsFile(path, host); ok {
					addr = net.JoinHostPort(ip, port)
				} else if clusterName(host) {
					return nil, &net.DNSError{Err: "not in " + HostsFileEnv + " " + path, Name: host, IsNotFound: true}
				}
			}
		}
		return dial(ctx, network, addr)
	}
}

// clusterName reports whether host is a cluster Service name.
func clusterName(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	return strings.HasSuffix(h, ".svc") || strings.HasSuffix(h, ".svc.cluster.local")
}

// LookupHostsFile returns the first address that the hosts file at path
// gives for name (case-insensitive, a trailing dot ignored). A missing or
// unreadable file lists nothing.
func LookupHostsFile(path, name string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) < 2 || net.ParseIP(fields[0]) == nil {
			continue
		}
		for _, n := range fields[1:] {
			if strings.TrimSuffix(strings.ToLower(n), ".") == name {
				return fields[0], true
			}
		}
	}
	return "", false
}
