// Package cluster starts a real Kubernetes control plane (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler) on loopback, with
// generated certificates, for the local cluster.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options configures the control plane.
type Options struct {
	// Dir is the state dir (certificates, etcd data, logs, kubeconfigs).
	Dir string
	// BinDir holds etcd, kube-apiserver, kube-controller-manager and
	// kube-scheduler.
	BinDir string
	// KeepData keeps etcd's data from an earlier run; by default every start
	// begins with an empty cluster (certificates are always reused).
	KeepData bool
	// ServiceCIDR is the service IP range (DefaultServiceCIDR when empty).
	ServiceCIDR string
	// AdvertiseIP, when set, is an address of this host that pods of real
	// nodes reach (their bridge's gateway): the API server then listens on
	// every address, advertises AdvertiseIP as the kubernetes Service's
	// endpoint and has it in its certificate, so that in-cluster clients
	// (kube-proxy's ClusterIP rules) reach it. Unset: loopback only.
	AdvertiseIP net.IP
	// Log receives progress lines.
	Log io.Writer
	// Now tells the time (certificate validity); nil means time.Now.
	Now func() time.Time
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	Layout Layout
	// Server is the API server URL, https://127.0.0.1:PORT.
	Server string
	// Host and Port of the API server, as pods get them.
	Host string
	Port int
	// Admin is a client config with cluster-admin rights.
	Admin *rest.Config

	components []*component
}

// Start starts the four components and waits until the API server is ready.
// On error everything started so far is stopped.
func Start(ctx context.Context, o Options) (cp *ControlPlane, err error) {
	if o.ServiceCIDR == "" {
		o.ServiceCIDR = DefaultServiceCIDR
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return nil, err
	}
	l := Layout{Dir: dir}
	svcIP, err := firstServiceIP(o.ServiceCIDR)
	if err != nil {
		return nil, err
	}
	t0 := o.Now()
	var extra []net.IP
	if o.AdvertiseIP != nil {
		extra = append(extra, o.AdvertiseIP)
	}
	if err := l.PKI().Ensure(o.Now(), svcIP, extra...); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "certificates ready in %s (%v)\n", l.PKI().Dir, o.Now().Sub(t0).Round(time.Millisecond))
	if !o.KeepData {
		if err := os.RemoveAll(l.EtcdData()); err != nil {
			return nil, err
		}
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	p := Ports{EtcdClient: ports[0], EtcdPeer: ports[1], APIServer: ports[2]}
	cp = &ControlPlane{Layout: l, Host: "127.0.0.1", Port: p.APIServer}
	cp.Server = fmt.Sprintf("https://127.0.0.1:%d", p.APIServer)
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()
	if err := cp.writeKubeconfigs(); err != nil {
		return nil, err
	}
	bin := func(name string) string { return filepath.Join(o.BinDir, name) }

	etcd, err := startComponent("etcd", bin("etcd"), etcdArgs(l, p), l.Log("etcd"))
	if err != nil {
		return nil, err
	}
	cp.components = append(cp.components, etcd)
	if err := waitTCP(ctx, fmt.Sprintf("127.0.0.1:%d", p.EtcdClient), etcd, time.Minute); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "etcd listening on 127.0.0.1:%d (%v)\n", p.EtcdClient, o.Now().Sub(t0).Round(time.Millisecond))

	api, err := startComponent("kube-apiserver", bin("kube-apiserver"), apiserverArgs(l, p, o.ServiceCIDR, o.AdvertiseIP), l.Log("kube-apiserver"))
	if err != nil {
		return nil, err
	}
	cp.components = append(cp.components, api)
	if cp.Admin, err = clientcmd.BuildConfigFromFlags("", l.Kubeconfig()); err != nil {
		return nil, err
	}
	cp.Admin.QPS, cp.Admin.Burst = 100, 200
	if err := waitReady(ctx, cp.Admin, api, 3*time.Minute); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Log, "kube-apiserver ready at %s (%v)\n", cp.Server, o.Now().Sub(t0).Round(time.Millisecond))

	kcm, err := startComponent("kube-controller-manager", bin("kube-controller-manager"), controllerManagerArgs(l, o.ServiceCIDR, o.AdvertiseIP != nil), l.Log("kube-controller-manager"))
	if err != nil {
		return nil, err
	}
	cp.components = append(cp.components, kcm)
	sched, err := startComponent("kube-scheduler", bin("kube-scheduler"), schedulerArgs(l), l.Log("kube-scheduler"))
	if err != nil {
		return nil, err
	}
	cp.components = append(cp.components, sched)
	fmt.Fprintf(o.Log, "kube-controller-manager and kube-scheduler started (%v)\n", o.Now().Sub(t0).Round(time.Millisecond))
	return cp, nil
}

func (cp *ControlPlane) writeKubeconfigs() error {
	pki := cp.Layout.PKI()
	if err := os.MkdirAll(filepath.Dir(cp.Layout.ComponentKubeconfig("x")), 0o700); err != nil {
		return err
	}
	for _, id := range ClientIdentities {
		path := cp.Layout.ComponentKubeconfig(id.User)
		if id.Cert == AdminCert {
			path = cp.Layout.Kubeconfig()
		}
		if err := pki.WriteKubeconfig(path, cp.Server, id); err != nil {
			return err
		}
	}
	return nil
}

// Failed returns an error (with the end of its log) when a component has
// exited, nil while all run.
func (cp *ControlPlane) Failed() error {
	for _, c := range cp.components {
		if !c.alive() {
			return c.failure()
		}
	}
	return nil
}

// Stop stops the components in reverse order of start.
func (cp *ControlPlane) Stop() {
	for i := len(cp.components) - 1; i >= 0; i-- {
		cp.components[i].stop(10 * time.Second)
	}
	cp.components = nil
}

func firstServiceIP(cidr string) (net.IP, error) {
	_, n, err := net.ParseCIDR(cidr)
	if err != nil {
		return nil, fmt.Errorf("service CIDR %q: %w", cidr, err)
	}
	ip := n.IP.To4()
	if ip == nil {
		return nil, fmt.Errorf("service CIDR %q: only IPv4 is supported", cidr)
	}
	out := make(net.IP, 4)
	copy(out, ip)
	out[3]++
	return out, nil
}

func waitTCP(ctx context.Context, addr string, c *component, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if !c.alive() {
			return c.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not listening on %s after %v; log %s:\n%s", c.name, addr, timeout, c.log, tail(c.log, 15))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func waitReady(ctx context.Context, cfg *rest.Config, c *component, timeout time.Duration) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(rctx)
		cancel()
		if err == nil && string(body) == "ok" {
			return nil
		}
		last = err
		if !c.alive() {
			return c.failure()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v (%v); log %s:\n%s", c.name, timeout, last, c.log, tail(c.log, 15))
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
