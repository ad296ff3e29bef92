package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKubeToolRun(t *testing.T) {
	bin := t.TempDir()
	// A stand-in kubectl: prints its KUBECONFIG and arguments; fails on "fail".
	script := "#!/bin/sh\necho \"KUBECONFIG=$KUBECONFIG args=$*\"\n[ \"$1\" != fail ] || { echo broken >&2; exit 3; }\n"
	if err := os.WriteFile(filepath.Join(bin, "kubectl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	tools := kubeTool{binDir: bin, kubeconfig: "/k/config", out: &out}
	if err := tools.run(context.Background(), nil, true, "kubectl", "get", "reval", "-n", "default"); err != nil {
		t.Fatal(err)
	}
	want := "$ kubectl get reval -n default\nKUBECONFIG=/k/config args=get reval -n default\n"
	if out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
	out.Reset()
	if err := tools.run(context.Background(), nil, false, "kubectl", "version"); err != nil || out.String() != "$ kubectl version\n" {
		t.Errorf("hidden output: %q, %v", out.String(), err)
	}
	err := tools.run(context.Background(), nil, false, "kubectl", "fail")
	if err == nil || !strings.Contains(err.Error(), "broken") {
		t.Errorf("a failing command: %v, want its output in the error", err)
	}
	t.Setenv("PATH", t.TempDir())
	if err := tools.run(context.Background(), nil, true, "helm", "version"); err == nil || !strings.Contains(err.Error(), "make localcluster-bins") {
		t.Errorf("a missing tool: %v, want how to build it", err)
	}
}
