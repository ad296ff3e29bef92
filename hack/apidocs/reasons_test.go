package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEveryReasonIsDocumented: every condition reason constant of
// api/v1alpha1 (a constant named Reason...) appears, as `Value`, under
// "## Condition reasons" in docs/operations.md, so that a person who sees a
// reason can look up what to do.
func TestEveryReasonIsDocumented(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	i := strings.Index(section, "\n## Condition reasons\n")
	if i < 0 {
		t.Fatal("docs/operations.md has no \"## Condition reasons\" section")
	}
	section = section[i+1:]
	if j := strings.Index(section[3:], "\n## "); j >= 0 {
		section = section[:j+3]
	}
	reasons := reasonConstants(t, filepath.Join(root, "api", "v1alpha1"))
	if len(reasons) == 0 {
		t.Fatal("found no Reason constants in api/v1alpha1")
	}
	for name, value := range reasons {
		if !strings.Contains(section, "`"+value+"`") {
			t.Errorf("%s (%q) is not under \"## Condition reasons\" in docs/operations.md: add a line \"- `%s`: what it means. What to do.\"", name, value, value)
		}
	}
}

// reasonConstants returns the string constants named Reason* of the Go
// package in dir (tests excluded), by name.
func reasonConstants(t *testing.T, dir string) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for k, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Reason") || k >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[k].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[n.Name] = v
				}
			}
		}
	}
	return out
}
