package runner

import (
	"context"
	"time"

	"repot.dev/repot-operator/runner/model"
	"repot.dev/repot-operator/runner/sandbox"
)

// ProgramResult is what running one program in the sandbox gave.
type ProgramResult struct {
	Stdout   string
	Stderr   string
	ExitCode int
	// Failure is "" when the program ran to completion, else a short reason
	// ("rejected: ...", "timeout", "memory", "output_limit", "crash", ...).
	Failure  string
	Duration time.Duration
}

// Sandbox runs a model's program. A returned error is an infrastructure
// failure (the sandbox could not run at all), never the program's fault.
type Sandbox interface {
	Run(ctx context.Context, code string) (ProgramResult, error)
}

// SandboxFunc adapts a function to Sandbox.
type SandboxFunc func(ctx context.Context, code string) (ProgramResult, error)

// Run calls f.
func (f SandboxFunc) Run(ctx context.Context, code string) (ProgramResult, error) {
	return f(ctx, code)
}

// FromSandbox adapts a runner/sandbox implementation (such as
// sandbox.NewPython) to Sandbox.
func FromSandbox(s sandbox.Sandbox) Sandbox {
	return SandboxFunc(func(ctx context.Context, code string) (ProgramResult, error) {
		r, err := s.Run(ctx, code)
		return ProgramResult{Stdout: r.Stdout, Stderr: r.Stderr, ExitCode: r.ExitCode, Failure: r.Failure, Duration: r.Duration}, err
	})
}

// Clock tells the time; tests inject a fake one.
type Clock = model.Clock
