package controllers

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "repot.dev/repot-operator"

// importRules say which imports each part of the module must not have, so
// that packages import downward only: the engine (envs, runner) knows nothing
// of the operator; the object builders, the Kueue adapter and the planning
// sit below the I/O shell (package controllers) and import no client
// (planning and the Kueue adapter no controller-runtime at all); the readers
// and the commands (cmd/repot) sit above everything. These rules check direct
// imports; TestPurityHoldsTransitively checks the whole dependency set of the
// pure parts. A path ending in "/..." is that package and everything under
// it; any other is one package.
// Only non-test files count (tests may reach across, e.g. to a fake client).
var importRules = []struct {
	from   string
	denied []string
	why    string
}{
	{"contract", []string{module + "/..."}, "the contract is the leaf that the engine, the analysis and the operator all import"},
	{"contract/prompt", vocabularyDenied, "the prompt format is vocabulary the engine, the analysis and the simulated server share: it imports only the contract and envs"},
	{"contract/program", vocabularyDenied, "the program reader is vocabulary the engine, the judge and the simulated server share: it imports only the contract and envs"},
	{"contract/replay", vocabularyDenied, "verified replay is vocabulary the engine, the judge and the analysis share: it imports only the contract and envs"},
	{"artifacts/...", []string{
		module + "/runner/...", module + "/modelserver/...", module + "/controllers/...", module + "/analysis/...", module + "/envs/...",
		module + "/cmd/...",
	}, "the artifact store is a leaf beside the contract: the ledger sidecar, the operator and the readers all use it"},
	{"controllers/...", []string{module + "/runner/...", module + "/modelserver/...", module + "/cmd/..."},
		"the operator reads the contract and the analysis, never the engine or the model servers"},
	{"analysis/...", []string{
		module + "/runner/...", module + "/modelserver/...", module + "/controllers/...", module + "/cmd/...",
	}, "the analysis reads the contract (records, traces, the prompt format), never the engine"},
	{"modelserver/...", []string{module + "/runner/...", module + "/cmd/...", module + "/controllers/..."},
		"the simulated model server and the GPU telemetry (the server pod's processes) stand beside the engine, not above it"},
	{"envs/...", []string{module + "/controllers/...", module + "/cmd/..."}, "the engine knows nothing of the operator"},
	{"runner/...", []string{module + "/controllers/...", module + "/cmd/..."}, "the engine knows nothing of the operator; cmd/repot joins them"},
	{"controllers/build", []string{
		module + "/controllers", module + "/controllers/kueueadapter", module + "/controllers/planning",
		module + "/cmd/...", module + "/controllers/schedule",
		"sigs.k8s.io/controller-runtime/pkg/client", "k8s.io/client-go/...",
	}, "the object builders are pure functions of the spec: no client, nothing above them (the ledger's layout is the contract's)"},
	{"controllers/kueueadapter", []string{
		module + "/controllers", module + "/controllers/planning",
		module + "/cmd/...", module + "/controllers/schedule",
		"sigs.k8s.io/controller-runtime/...", "k8s.io/client-go/...",
	}, "the Kueue adapter is pure (Workloads and their admission); the shell holds its client"},
	{"controllers/planning", []string{
		module + "/controllers", module + "/cmd/...", module + "/controllers/schedule",
		"sigs.k8s.io/controller-runtime/...", "k8s.io/client-go/...",
	}, "planning is pure: no client, no controller-runtime, nothing of the shell above it (the ledger's layout is the contract's)"},
	{"controllers", []string{module + "/cmd/...", module + "/controllers/schedule"},
		"the controller does not depend on the readers of results (cmd/repot/results) or the commands"},
	{"cmd/repot/results/...", []string{module + "/cmd/repot", module + "/runner/...", module + "/modelserver/..."},
		"the readers of results (repot results export, report, judge) read what the operator counts, never the engine; they sit below the commands"},
	{"artifacts", []string{module + "/artifacts/s3/...", "github.com/minio/..."},
		"where the traces are kept is separate from the client that keeps them (artifacts/s3): the planner reads the first"},
	{"controllers/schedule/cronspec", []string{module + "/...", "k8s.io/...", "sigs.k8s.io/..."},
		"cron parsing knows nothing of Kubernetes, so that `make fuzz` instruments only it and robfig/cron"},
	{"runner/ledger", []string{module + "/controllers/...", module + "/cmd/...", module + "/runner", module + "/runner/methods"},
		"the ledger store runs in the runner pod beside the engine and needs none of the operator"},
	{"runner", []string{module + "/runner/ledger", "k8s.io/client-go/...", "sigs.k8s.io/controller-runtime/..."},
		"the engine runs on a laptop as in a pod: it knows nothing of Kubernetes (the runner pod's ledger store is beside it)"},
	{"runner/methods", []string{module + "/runner/ledger", "k8s.io/client-go/...", "sigs.k8s.io/controller-runtime/..."},
		"the methods know nothing of Kubernetes"},
}

// vocabularyDenied is all of the module but the contract, envs and the
// vocabulary itself.
var vocabularyDenied = []string{
	module + "/runner/...", module + "/modelserver/...", module + "/analysis/...", module + "/controllers/...",
	module + "/cmd/...", module + "/artifacts/...", module + "/api/...", module + "/hack/...",
}

func matches(pattern, path string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == p || strings.HasPrefix(path, p+"/")
	}
	return path == pattern
}

// importViolations returns "dir imports path (why)" for each import of a
// non-test Go file under root that importRules deny.
func importViolations(root string) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if dir == "contract" && strings.Contains(strings.Split(imp, "/")[0], ".") {
				out = append(out, dir+"/"+filepath.Base(path)+" imports "+imp+" (the contract imports only the standard library)")
			}
			for _, r := range importRules {
				if !matches(r.from, dir) {
					continue
				}
				for _, d := range r.denied {
					if matches(d, imp) {
						out = append(out, dir+"/"+filepath.Base(path)+" imports "+imp+" ("+r.why+")")
					}
				}
			}
		}
		return nil
	})
	return out, err
}

func TestImportDirection(t *testing.T) {
	if _, err := os.Stat("../go.mod"); err != nil {
		t.Fatalf("the module root is not the parent directory: %v", err)
	}
	bad, err := importViolations("..")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
}

func TestImportRulesCatchAViolation(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "runner", "methods")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package methods\n\nimport _ \"" + module + "/controllers/planning\"\n"
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bad, err := importViolations(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || !strings.HasPrefix(bad[0], "runner/methods/x.go imports "+module+"/controllers/planning") {
		t.Errorf("violations = %q; want the one of runner/methods/x.go", bad)
	}
}

// TestPlanningLinksNoNVML: the operator's pure parts read GPU readings
// through the contract and link no NVML binding (go-nvml is cgo and only
// the telemetry program needs it).
func TestPlanningLinksNoNVML(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command to list dependencies with: %v", err)
	}
	for _, pkg := range []string{"./planning", "../runner/ledger", "./build", "../cmd/repot/results", "./schedule", "../contract", "../analysis/..."} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/NVIDIA/go-nvml") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}

// clients are the dependencies that talk to something: the API server
// (client-go, controller-runtime's client) and the object store (minio-go).
var clients = []string{"k8s.io/client-go/...", "sigs.k8s.io/controller-runtime/pkg/client/...", "github.com/minio/..."}

// pureDeps are the packages whose whole dependency set, not only their own
// imports, must hold none of denied: importRules checks one import deep,
// and a pure package that imports a leaf which imports a client links that
// client all the same.
var pureDeps = []struct {
	pkg    string
	denied []string
	why    string
}{
	{"./planning", clients, "planning is a pure function of the evaluation and the world observed"},
	{"./build", clients, "the object builders are pure functions of the spec"},
	{"./kueueadapter", clients, "the Kueue adapter is pure (Workloads and their admission)"},
	{"../artifacts", clients, "the artifact store's names are read by the planner and the builders; its client is artifacts/s3"},
	{"../contract/...", clients, "the contract is the standard library's only"},
}

// depViolations lists the dependencies of pkg (go list -deps, run in this
// directory) that match one of denied.
func depViolations(pkg string, denied []string) ([]string, error) {
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		return nil, fmt.Errorf("go list -deps %s: %w", pkg, err)
	}
	var bad []string
	for _, dep := range strings.Fields(string(out)) {
		for _, d := range denied {
			if matches(d, dep) {
				bad = append(bad, dep)
			}
		}
	}
	return bad, nil
}

func TestPurityHoldsTransitively(t *testing.T) {
	for _, r := range pureDeps {
		bad, err := depViolations(r.pkg, r.denied)
		if err != nil {
			t.Fatal(err)
		}
		for _, dep := range bad {
			t.Errorf("%s depends on %s: %s", r.pkg, dep, r.why)
		}
	}
}

// TestPurityCheckCatchesAClient: the shell itself links every client, so
// the check must find them there.
func TestPurityCheckCatchesAClient(t *testing.T) {
	bad, err := depViolations(".", clients)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"k8s.io/client-go/rest", "sigs.k8s.io/controller-runtime/pkg/client"} {
		if !slices.Contains(bad, want) {
			t.Errorf("the check of the controller package does not report %s; it reported %q", want, bad)
		}
	}
}
