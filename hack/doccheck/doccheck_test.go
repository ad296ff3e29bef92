package doccheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDocGoNamesExistingFiles fails for each doc.go in the module that names
// a Go file its package (or, for a path, the module) does not have.
func TestDocGoNamesExistingFiles(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not ../..: %v", err)
	}
	missing, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Error(m)
	}
}

func TestNames(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"none", "// Package p does things.\npackage p\n", nil},
		{"plain, generated and paths, each once", "// Package p: apply.go applies; zz_generated.deepcopy.go copies;\n// see planning/provenance.go. apply.go again.\npackage p\n",
			[]string{"apply.go", "zz_generated.deepcopy.go", "planning/provenance.go"}},
		{"relative path up", "// Package p: see ../q/q.go.\npackage p\n", []string{"../q/q.go"}},
		{"end of sentence and parenthesis", "// Package p (setup.go). The shell is in shell.go.\npackage p\n", []string{"setup.go", "shell.go"}},
		{"not a Go file", "// Package p reads go.mod and foo.golden, talks Go.\npackage p\n", nil},
		{"block comment after the package clause", "// Package p.\npackage p\n\n/* x.go */\n", []string{"x.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Names([]byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Names() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFindReportsEachMissingFile builds a small module and checks that Find
// names the doc.go and the file for each missing one, and only those.
func TestFindReportsEachMissingFile(t *testing.T) {
	root := t.TempDir()
	write := func(rel, src string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n")
	write("main.go", "package main\n")
	write("a/doc.go", "// Package a: a.go is here, gone.go is not; b/b.go is below,\n// main.go is the module's, a/b/b.go from the root, b/gone.go is not.\npackage a\n")
	write("a/a.go", "package a\n")
	write("a/b/b.go", "package b\n")
	write("a/b/doc.go", "// Package b: b.go, and ../a.go one up, ../../main.go.\npackage b\n")
	write("c/doc.go", "// Package c lives in c.go.\npackage c\n")
	write("testdata/doc.go", "// Package t names nothing.go.\npackage t\n")
	write(".hidden/doc.go", "// Package h names nothing.go.\npackage h\n")

	got, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Missing{
		{DocGo: "a/doc.go", Name: "b/gone.go"},
		{DocGo: "a/doc.go", Name: "gone.go"},
		{DocGo: "c/doc.go", Name: "c.go"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Find() mismatch (-want +got):\n%s", diff)
	}
	if s := want[1].String(); s != "a/doc.go names gone.go, which is not in a" {
		t.Errorf("String() = %q", s)
	}
}
