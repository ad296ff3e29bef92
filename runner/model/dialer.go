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
// by getenv(HostsFileEnv) is replaced by its address before dialing.
func HostsDialer(dial DialFunc, getenv func(string) string) DialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if path := getenv(HostsFileEnv); path != "" {
			if host, port, err := net.SplitHostPort(addr); err == nil && net.ParseIP(host) == nil {
				if ip, ok := LookupHostsFile(path, host); ok {
					addr = net.JoinHostPort(ip, port)
				}
			}
		}
		return dial(ctx, network, addr)
	}
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
