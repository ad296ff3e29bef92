package sandbox

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestImageShipsTheTestedPython: the runtime image asserts the Python minor
// version it installs (the Dockerfile's `sys.version_info[:2] == (3, N)`),
// and it is the version these tests and the escape catalogue run on. The
// sandbox's defence depends on the interpreter's internals, so a
// difference means the sandbox shipped is not the one tested.
func TestImageShipsTheTestedPython(t *testing.T) {
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`sys\.version_info\[:2\] == \((\d+), (\d+)\)`).FindSubmatch(data)
	if m == nil {
		t.Fatal("the Dockerfile's runtime stage does not assert the Python version it installs (sys.version_info[:2] == (3, N))")
	}
	image := string(m[1]) + "." + string(m[2])
	py := interpreters("")
	if len(py) == 0 {
		t.Fatal("no python3 to test the sandbox on")
	}
	out, err := exec.Command(py[0], "-c", "import sys; print('%d.%d' % sys.version_info[:2])").Output()
	if err != nil {
		t.Fatalf("%s: %v", py[0], err)
	}
	if host := strings.TrimSpace(string(out)); host != image {
		t.Errorf("the sandbox tests run on Python %s, the image ships %s: test on the image's Python, or change the Dockerfile's base", host, image)
	}
}
