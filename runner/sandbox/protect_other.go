//go:build !linux

package sandbox

// ProtectRunner does nothing outside Linux.
func ProtectRunner() error { return nil }
