package runnertest

import (
	"os"
	"sync"
	"testing"

	"repot.dev/repot-operator/runner/sandbox"
)

var (
	pythonOnce sync.Once
	python     *sandbox.Python
	pythonErr  error
)

// Python returns the real python sandbox, one per test binary (its
// zygotes are started once), skipping the test when python3 cannot run
// here. A binary that uses it calls Main from its TestMain.
func Python(t testing.TB) sandbox.Sandbox {
	t.Helper()
	pythonOnce.Do(func() { python, pythonErr = sandbox.NewPython(sandbox.Options{}) })
	if pythonErr != nil {
		t.Skipf("no python sandbox on this machine: %v", pythonErr)
	}
	return python
}

// Main runs the tests and closes the shared sandbox, so that its zygotes
// and the run directories it made ahead do not outlive them.
func Main(m *testing.M) {
	code := m.Run()
	if python != nil {
		python.Close()
	}
	os.Exit(code)
}
