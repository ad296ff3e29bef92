package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// Registry is a container registry on loopback for the real nodes: Debian's
// docker-registry (the CNCF distribution registry) with htpasswd
// authentication, so that pods pull the project's image with a real pull
// secret. Its storage lives under Dir and goes with it.
type Registry struct {
	// Host is HOST:PORT, as image references name it.
	Host string
	// User and Password are the credentials it accepts.
	User, Password string
	dir            string
	proc           *component
}

// RegistryUser is the one account of the local registry.
const RegistryUser = "repot"

// StartRegistry starts the registry on a free loopback port and waits until
// it answers.
func StartRegistry(ctx context.Context, dir string) (*Registry, error) {
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		return nil, fmt.Errorf("the local registry needs Debian's docker-registry (apt-get install docker-registry): %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(dir, "storage"), 0o700); err != nil {
		return nil, err
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	r := &Registry{Host: fmt.Sprintf("127.0.0.1:%d", ports[0]), User: RegistryUser, Password: hex.EncodeToString(secret), dir: dir}
	hash, err := bcrypt.GenerateFromPassword([]byte(r.Password), bcrypt.DefaultCost)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "htpasswd"), []byte(r.User+":"+string(hash)+"\n"), 0o600); err != nil {
		return nil, err
	}
	config := fmt.Sprintf(`version: 0.1
log: {level: warn}
storage:
  filesystem: {rootdirectory: %q}
  delete: {enabled: true}
http:
  addr: %q
auth:
  htpasswd: {realm: repot-local, path: %q}
`, filepath.Join(dir, "storage"), r.Host, filepath.Join(dir, "htpasswd"))
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(config), 0o600); err != nil {
		return nil, err
	}
	r.proc, err = startComponent("docker-registry", bin, []string{"serve", filepath.Join(dir, "config.yml")}, filepath.Join(dir, "registry.log"))
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		// An unauthenticated /v2/ answers 401 once the registry serves.
		resp, err := http.Get("http://" + r.Host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return r, nil
			}
		}
		if !r.proc.alive() {
			return nil, r.proc.failure()
		}
		if time.Now().After(deadline) {
			r.Stop()
			return nil, fmt.Errorf("the local registry did not answer on %s (log: %s)", r.Host, r.proc.log)
		}
		select {
		case <-ctx.Done():
			r.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Push copies a buildah image into the registry as REPO:TAG and returns the
// reference pods use. The copy carries one more label, so it is another
// image (another image ID) than the one imported into the nodes: with the
// kubelet's KubeletEnsureSecretPulledImages (on by default), an image ID
// pulled with a secret must be pulled again, with credentials, by every pod
// that uses it, and pods naming the imported copy have no registry to pull
// from.
func (r *Registry) Push(ctx context.Context, image, repoTag string) (string, error) {
	ref := r.Host + "/" + repoTag
	run := func(args ...string) (string, error) {
		out, err := exec.CommandContext(ctx, "buildah", args...).CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("pushing %s to the local registry: buildah %s: %w: %s", image, args[0], err, strings.TrimSpace(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	}
	c, err := run("from", "--pull=never", image)
	if err != nil {
		return "", err
	}
	defer func() { _, _ = run("rm", c) }()
	if _, err := run("config", "--label", "dev.repot.local-registry="+repoTag, c); err != nil {
		return "", err
	}
	id, err := run("commit", "-q", c)
	if err != nil {
		return "", err
	}
	defer func() { _, _ = run("rmi", id) }()
	if _, err := run("push", "-q", "--tls-verify=false", "--creds", r.User+":"+r.Password, id, "docker://"+ref); err != nil {
		return "", err
	}
	return ref, nil
}

// Stop stops the registry and removes its storage.
func (r *Registry) Stop() {
	if r == nil {
		return
	}
	r.proc.stop(5 * time.Second)
	_ = os.RemoveAll(r.dir)
}
