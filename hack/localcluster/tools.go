package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// kubeTool runs the real kubectl and helm (bin/kubectl and bin/helm, built
// by hack/build-cluster-bins.sh tools) against one cluster, printing each
// command as a user would type it.
type kubeTool struct {
	binDir, kubeconfig string
	out                io.Writer
}

// path is bin/NAME, or NAME on $PATH when bin/ has none.
func (t kubeTool) path(name string) (string, error) {
	p := filepath.Join(t.binDir, name)
	if _, err := os.Stat(p); err == nil {
		return filepath.Abs(p)
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s: not in %s nor on $PATH (make localcluster-bins builds it: hack/build-cluster-bins.sh tools)", name, t.binDir)
}

// run runs NAME ARGS with KUBECONFIG set, stdin from in (nil: none), its
// output to t.out after a "$ NAME ARGS" line; show=false hides the output
// unless the command fails.
func (t kubeTool) run(ctx context.Context, in io.Reader, show bool, name string, args ...string) error {
	p, err := t.path(name)
	if err != nil {
		return err
	}
	fmt.Fprintf(t.out, "$ %s %s\n", name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+t.kubeconfig)
	cmd.Stdin = in
	var buf strings.Builder
	if show {
		cmd.Stdout, cmd.Stderr = t.out, t.out
	} else {
		cmd.Stdout, cmd.Stderr = &buf, &buf
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, buf.String())
	}
	return nil
}
