package buildinfo

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	cases := []struct {
		name              string
		bi                debug.BuildInfo
		version, revision string
	}{
		{"clean", debug.BuildInfo{Main: debug.Module{Version: "v0.3.0"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, "v0.3.0", "abc"},
		{"dirty", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{{Key: "vcs.modified", Value: "true"}, {Key: "vcs.revision", Value: "abc"}}}, "(devel)", "abc-dirty"},
		{"no vcs", debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "(devel)", ""},
	}
	for _, tc := range cases {
		v, r := fromBuildInfo(&tc.bi)
		if v != tc.version || r != tc.revision {
			t.Errorf("%s: %q, %q; want %q, %q", tc.name, v, r, tc.version, tc.revision)
		}
	}
}

// linkFlag matches a `-X importpath.name=value` in the Dockerfile's build.
var linkFlag = regexp.MustCompile(`-X\s+(\S+)\.(\w+)=`)

// TestDockerfileLinksTheseVariables checks that the Dockerfile's -ldflags
// -X name this package's link-time variables, each of them: the linker
// ignores -X for a symbol that does not exist, and the image's binary would
// then report "(devel)" (an image build has no .git), which no other test
// tells from a stamped version.
func TestDockerfileLinksTheseVariables(t *testing.T) {
	const pkg = "repot.dev/repot-operator/contract/buildinfo"
	df, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatalf("the Dockerfile at the module root: %v", err)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "buildinfo.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				for _, n := range sp.(*ast.ValueSpec).Names {
					vars[n.Name] = true
				}
			}
		}
	}
	linked := map[string]bool{}
	for _, m := range linkFlag.FindAllStringSubmatch(string(df), -1) {
		if m[1] != pkg || !vars[m[2]] {
			t.Errorf("the Dockerfile links -X %s.%s, which is not a variable of %s (%v)", m[1], m[2], pkg, vars)
		}
		linked[m[2]] = true
	}
	for v := range vars {
		if !linked[v] {
			t.Errorf("the Dockerfile does not link %s.%s", pkg, v)
		}
	}
}
