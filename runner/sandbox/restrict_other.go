//go:build !linux

package sandbox

import "errors"

// ExecRestricted is Linux only.
func ExecRestricted(argv []string) error { return errors.New("restrict: Linux only") }
