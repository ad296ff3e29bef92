//go:build !linux

package sandbox

import "errors"

// RuntimeDefaultProgram is Linux only.
func RuntimeDefaultProgram() ([]byte, error) {
	return nil, errors.New("sandbox: seccomp is Linux only")
}
