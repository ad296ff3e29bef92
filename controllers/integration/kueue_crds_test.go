package integration_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
)

// kueueCRDs is the directory of Kueue's CRDs in the Go module cache, at the
// sigs.k8s.io/kueue version go.mod pins, or "" with the reason when it
// cannot be found (the Kueue tests then skip and say why). The CRDs are read
// where the module cache has them, not copied into the tree.
func kueueCRDs(root string) (dir, why string) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue")
	cmd.Dir = root
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", "go list -m sigs.k8s.io/kueue: " + err.Error() + ": " + stderr.String() + " (run: go mod download sigs.k8s.io/kueue)"
	}
	mod := strings.TrimSpace(out.String())
	if mod == "" {
		return "", "sigs.k8s.io/kueue is not in the module cache (run: go mod download sigs.k8s.io/kueue)"
	}
	return filepath.Join(mod, "config", "components", "crd", "bases"), ""
}

// kueueMissing says why Kueue's CRDs are not installed in the test API
// server ("" when they are).
var kueueMissing string
