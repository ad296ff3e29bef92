// Package sandbox runs untrusted model-written Python programs.
//
// The real implementation, NewPython, starts one python3 process per
// program (python3 -I -S -B -c <wrapper>), and no model code ever runs in
// the Go process. The layers, outermost first:
//
//   - Operating system. An empty environment; a fresh temporary directory
//     as the working directory, removed afterwards; its own user, network,
//     PID, IPC and UTS namespaces where the kernel allows it (Python.Mode
//     says which; where a container runtime forbids namespaces, the pod's
//     NetworkPolicy is the remaining network barrier); uid 65534 when the runner is
//     root; its own process group, killed (SIGKILL) on the wall-clock limit,
//     on the stdout cap, when ctx ends and after the program exits; the PID
//     namespace takes down anything that escaped the group; Pdeathsig kills
//     the program if the runner dies.
//   - Resource limits, set by the trusted wrapper (wrapper.py) before it
//     reads the program: RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_NOFILE,
//     RLIMIT_NPROC (default 1: no fork at all), RLIMIT_CORE 0.
//   - Landlock, where the kernel has it (the wrapper applies it, with
//     no_new_privs, before reading the program): files may be read only
//     beneath the interpreter's library directories and written only
//     beneath the run's directory; with ABI >= 4 no TCP bind or connect;
//     with ABI >= 6 no signals to processes outside the sandbox. This
//     holds even without namespaces (Options.Isolation none).
//   - Static check (Python's own parser, in the sandboxed process). It
//     rejects: imports outside the allowlist (abc, array, bisect, cmath,
//     collections, collections.abc, copy, dataclasses, decimal, enum,
//     fractions, functools, heapq, itertools, json, math, numbers, operator,
//     queue, random, re, statistics, string, sys, time, typing) and
//     relative imports; the names open, eval, exec, compile, __import__,
//     globals, locals, vars, breakpoint, input, help, memoryview; getattr,
//     setattr, delattr and hasattr except as a direct call with a constant
//     name not starting with '_'; any dunder name other than __name__ (and
//     assigning __slots__); any dunder attribute other than __init__ and
//     __name__; frame, code and traceback attributes (f_globals, gi_frame,
//     tb_frame, ...) and format_map; string constants (docstrings aside)
//     that mention a dunder other than __main__, __init__, __name__, or
//     combine '{' with "__" (str.format field access); match-class
//     patterns on '_' attributes.
//   - Restricted execution. The program runs as module __main__ with
//     builtins lacking the banned names, attribute builtins that refuse
//     names starting with '_', and an import function that hands out
//     proxies of the allowed modules holding only their public, non-module
//     attributes (operator.attrgetter/methodcaller, string.Formatter,
//     typing.get_type_hints/ForwardRef and random.SystemRandom are left
//     out); `sys` is a proxy with setrecursionlimit, getrecursionlimit,
//     stdout, stderr, an empty stdin, exit, argv, maxsize, version_info and
//     a few constants. exit() and quit() raise SystemExit.
//
// The program reaches the process on stdin and the wrapper reports its
// progress on file descriptor 3, so neither argv nor the environment ever
// carries model text.
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
