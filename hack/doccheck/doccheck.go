// Package doccheck finds the Go files a package's doc.go names that are not
// there: a doc.go that says "reconciler.go does X" goes stale when
// reconciler.go moves or is renamed. doccheck_test.go runs it on the whole
// module.
package doccheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// goFile matches a Go file name in prose: "apply.go", "zz_generated.deepcopy.go",
// "planning/provenance.go", "../main.go".
var goFile = regexp.MustCompile(`(?:\.\./)*[A-Za-z0-9_][A-Za-z0-9_./-]*\.go\b`)

// Missing is a Go file that a doc.go names but that does not exist.
type Missing struct {
	DocGo string // the doc.go, relative to the module root, slash-separated
	Name  string // the file as the doc.go writes it
}

func (m Missing) String() string {
	return m.DocGo + " names " + m.Name + ", which is not in " + filepath.ToSlash(filepath.Dir(filepath.FromSlash(m.DocGo)))
}

// Names returns the Go file names in the comments of a doc.go source, in
// order, each once.
func Names(src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "doc.go", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	for _, cg := range f.Comments {
		for _, n := range goFile.FindAllString(cg.Text(), -1) {
			n = strings.TrimRight(n, "./")
			if !strings.HasSuffix(n, ".go") || seen[n] {
				continue
			}
			seen[n] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// Find walks root (the module root) and returns, sorted, every file named
// in a doc.go that is missing. A name is looked up relative to the doc.go's
// directory ("apply.go", "planning/provenance.go", "../reconciler.go"),
// then relative to root ("main.go", "cmd/repot/root.go").
// Hidden directories, testdata, bin and node_modules are skipped.
func Find(root string) ([]Missing, error) {
	var out []Missing
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "bin" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "doc.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		names, err := Names(src)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		dir := filepath.Dir(path)
		for _, n := range names {
			if exists(filepath.Join(dir, filepath.FromSlash(n))) {
				continue
			}
			if exists(filepath.Join(root, filepath.FromSlash(n))) {
				continue
			}
			out = append(out, Missing{DocGo: filepath.ToSlash(rel), Name: n})
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool {
		if out[i].DocGo != out[j].DocGo {
			return out[i].DocGo < out[j].DocGo
		}
		return out[i].Name < out[j].Name
	})
	return out, err
}

func exists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}
