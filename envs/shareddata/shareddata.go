// Package shareddata locates the published reference data (../shared/data
// beside the project checkout) for tests and benchmarks. The data is never
// copied into the project.
package shareddata

import (
	"errors"
	"os"
	"path/filepath"
)

// EnvVar overrides where the data is looked for.
const EnvVar = "REPOT_SHARED_DATA"

// Dir returns the folder that holds the published data files: $REPOT_SHARED_DATA
// when set, else ../shared/data relative to the module root found by walking up
// from the working directory. It returns an error when the folder is absent.
func Dir() (string, error) {
	if d := os.Getenv(EnvVar); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			data := filepath.Join(filepath.Dir(d), "shared", "data")
			if st, err := os.Stat(data); err == nil && st.IsDir() {
				return data, nil
			}
			return "", errors.New("the published data is not at " + data + " (../shared/data beside the checkout); set " + EnvVar + " to point at it")
		}
		if filepath.Dir(d) == d {
			return "", errors.New("no go.mod above " + wd)
		}
	}
}

// File returns the path of one published data file, or an error saying why it
// cannot be found.
func File(name string) (string, error) {
	d, err := Dir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(d, name)
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}

// TB is the part of testing.TB that Require uses.
type TB interface {
	Helper()
	Skipf(format string, args ...any)
}

// Require returns the path of a published data file, or skips the test or
// benchmark with a clear message when the data is absent.
func Require(tb TB, name string) string {
	tb.Helper()
	p, err := File(name)
	if err != nil {
		tb.Skipf("skipping: needs the published data file %s: %v", name, err)
	}
	return p
}
