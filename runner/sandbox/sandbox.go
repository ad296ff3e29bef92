// Package sandbox runs untrusted model-written Python programs.
//
// The real implementation, NewPython, keeps warm python3 "zygote" processes
// (zygote.py, started with an empty environment, one per concurrency slot)
// that have imported every module a program may use. Per program, a zygote
// forks a fresh child; no model code ever runs in the Go process or in the
// zygote. The layers, outermost first (docs/sandbox.md has the attack
// classes and the layer that stops each):
//
//   - seccomp-bpf (FilterProgram, assembled with go-seccomp-bpf), installed
//     with no_new_privs in the child before it reads the program, in every
//     mode: no open of any file, no socket of any family, no new process or
//     thread, no exec, no signal to any process, no ptrace or
//     process_vm_*, no setpgid/setsid, no change to limits, priorities or
//     scheduling (prlimit64 but reading its own, setpriority, ...), no
//     signal-driven I/O (fcntl F_SETOWN/F_SETSIG, O_ASYNC), no namespace,
//     mount, key, BPF, io_uring or perf calls. NewPython fails
//     (Options.Min) when it cannot be installed.
//   - Process control by the runner: each child leads its own process group
//     (which it cannot leave) and is killed by pid and by group on the wall
//     clock, the stdout cap and ctx; the zygote reaps it only after the
//     runner killed the group, so neither id is reused in between.
//   - Landlock where the kernel has it (Options.Landlock): reads only beneath
//     the interpreter's libraries, no writes, no TCP, no abstract sockets or
//     signals outside.
//   - Namespaces where allowed (Options.Isolation): user, network, IPC, UTS
//     (no PID namespace), one set per zygote. uid 65534 when the runner is
//     root. An empty environment, a fresh temporary working directory,
//     rlimits (CPU, address space, file size, open files, processes, no
//     core), only fds 1 and 2 open. SizeForContainer chooses program
//     concurrency and the address-space limit so that the programs fit the
//     container's memory limit.
//   - Static check (Python's own parser, in the child): an import allowlist
//     and no dunder, frame, traceback, generator or code attributes by any
//     spelling (attribute, getattr with a constant, match class patterns,
//     format templates).
//   - Restricted execution: restricted builtins, module proxies, a safe
//     functools.wraps, and a stack whose frames hold nothing useful.
//
// The child reports "ready", then "rejected", "syntax" or "start" on a
// status pipe it closes before the program's first instruction; after that
// only the exit status and the output count.
package sandbox

import (
	"context"
	"time"
)

// Sandbox runs one program.
type Sandbox interface {
	// Run executes code and reports what happened. The error is reserved for
	// infrastructure failures (python3 could not be started, the temporary
	// directory could not be made, ctx was cancelled); everything the program
	// itself does, including being rejected, crashing or running out of
	// time, is reported in Result.Failure with a nil error.
	Run(ctx context.Context, code string) (Result, error)
}

// Result is the outcome of one program run.
type Result struct {
	// Stdout and Stderr are what the program wrote (Stdout up to the output
	// cap, Stderr up to its own cap), with invalid UTF-8 replaced by U+FFFD.
	Stdout, Stderr string
	// ExitCode is the process's exit status, or -1 when it was killed by a
	// signal.
	ExitCode int
	// Failure is "" when the program ran to completion (exit status 0), else
	// a short model-failure reason; see the Failure* constants and prefixes.
	Failure string
	// Duration is the wall time of the run, from start to reaping.
	Duration time.Duration
}

// Failure reasons. Reasons with a detail start with one of the prefixes,
// for example "rejected: import of 'os' is not allowed" or
// "crash: exit status 1".
const (
	// FailureTimeout: the wall-clock or CPU-time limit was reached.
	FailureTimeout = "timeout"
	// FailureMemory: the address-space limit was reached (MemoryError).
	FailureMemory = "memory"
	// FailureOutputLimit: stdout exceeded the cap; the process was killed.
	FailureOutputLimit = "output_limit"
	// PrefixRejected: the static check refused the program.
	PrefixRejected = "rejected: "
	// PrefixSyntax: the program is not valid Python.
	PrefixSyntax = "syntax_error: "
	// PrefixCrash: an uncaught exception ("crash: ZeroDivisionError"), a
	// non-zero exit ("crash: exit status 3") or a fatal signal
	// ("crash: signal: segmentation fault").
	PrefixCrash = "crash: "
)

// Func adapts a function to Sandbox, for tests of code that runs programs
// (the real thing is NewPython).
type Func func(ctx context.Context, code string) (Result, error)

// Run calls f.
func (f Func) Run(ctx context.Context, code string) (Result, error) { return f(ctx, code) }
