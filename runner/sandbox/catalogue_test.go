package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"repot.dev/repot-operator/contract/program"
)

// layer says which defence a case exercises.
type layer int

const (
	// checked: the normal sandbox, static check on.
	checked layer = iota
	// runtimeOnly: static check off; restricted builtins and module proxies
	// alone must stop the program.
	runtimeOnly
	// raw: static check and restricted execution off (the program gets the
	// real builtins and imports), so only the operating-system layer (the
	// seccomp filter, rlimits, Landlock and namespaces where present, the
	// empty environment) contains the program. Runs in every mode.
	raw
)

// adversary is one hostile (or merely broken) program and what must happen.
type adversary struct {
	name  string
	layer layer
	code  string
	// want lists acceptable Result.Failure values ('*' suffix: prefix).
	want []string
	// moves, when set, is what ParseMoves must return for the output.
	moves []string
	// movesErr, when set, must appear in ParseMoves' error.
	movesErr string
	// landlock marks a case only Landlock contains (uid 65534 may read
	// /etc/passwd and write /tmp); it is skipped where Landlock is absent.
	landlock bool
	// timeout, when set, replaces the wall-clock limit of testOptions.
	timeout time.Duration
	// check runs extra assertions.
	check func(t *testing.T, r Result)
}

var catalogue = []adversary{
	{name: "infinite loop", code: "while True:\n    pass\n", want: []string{FailureTimeout}, timeout: shortTimeout},
	{name: "sleep", code: "import time\ntime.sleep(600)\n", want: []string{FailureTimeout}, timeout: shortTimeout},
	{name: "catastrophic regex", code: "import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')\n", want: []string{FailureTimeout}, timeout: shortTimeout},
	{name: "ignoring SIGALRM (checked)", code: "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True: pass\n",
		want: []string{"rejected: import of 'signal' is not allowed"}},
	{name: "ignoring SIGALRM and SIGTERM (raw)", layer: raw,
		code: "import _signal as signal\nfor s in (signal.SIGALRM, signal.SIGTERM, signal.SIGINT, signal.SIGXCPU):\n    signal.signal(s, signal.SIG_IGN)\nsignal.alarm(1)\nwhile True: pass\n",
		want: []string{FailureTimeout}, timeout: shortTimeout},
	{name: "ten to the ten to the eight", code: "x = 10**10**8\nprint(len(str(x)))\n", want: []string{FailureTimeout, FailureMemory}, timeout: shortTimeout},
	{name: "huge allocation", code: "x = bytearray(10**10)\n", want: []string{FailureMemory}},
	{name: "growing list", code: "x = []\nwhile True:\n    x.append(bytearray(10**7))\n", want: []string{FailureMemory}},
	{name: "deep recursion", code: "def f(n):\n    return f(n + 1)\nf(0)\n", want: []string{"crash: RecursionError"}},
	{name: "deep recursion with raised limit", code: "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return f(n + 1) + 1\nf(0)\n",
		// How CPython dies when the C stack runs out depends on where the
		// overflow lands: a segfault, a MemoryError or a SystemError raised
		// with no exception set. Each is a contained crash.
		want: []string{FailureMemory, "crash: signal: segmentation fault", "crash: SystemError", "crash: MemoryError", FailureTimeout}, timeout: shortTimeout},
	{name: "fork bomb (checked)", code: "import os\nwhile True:\n    os.fork()\n", want: []string{"rejected: import of 'os' is not allowed"}},
	{name: "fork bomb (raw)", layer: raw, code: "import os\nwhile True:\n    os.fork()\n", want: []string{"crash: PermissionError"}},
	{name: "subprocess", code: "import subprocess\nprint(subprocess.run(['cat', '/etc/passwd'], capture_output=True).stdout)\n",
		want: []string{"rejected: import of 'subprocess' is not allowed"}},
	{name: "subprocess (raw)", layer: raw, code: "import subprocess\nprint(subprocess.run(['cat', '{{OUTSIDE}}/secret.txt'], capture_output=True).stdout)\n",
		want: []string{"crash: BlockingIOError", "crash: OSError", "crash: PermissionError"}},
	{name: "os.system", code: "import os\nos.system('touch {{OUTSIDE}}/pwned')\n", want: []string{"rejected: import of 'os' is not allowed"}},
	{name: "os.system (raw)", layer: raw, code: "import os\nprint('status', os.system('touch {{OUTSIDE}}/pwned; cat /etc/passwd'))\n",
		want: []string{"", "crash: *"}},
	{name: "daemon outliving its parent (raw)", layer: raw, code: `import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(60)
print('parent done')
`, want: []string{"crash: PermissionError"}},
	{name: "killing the parent", code: "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", want: []string{"rejected: import of 'os' is not allowed"}},
	{name: "killing the parent (raw)", layer: raw, code: "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nos.kill(-1, signal.SIGKILL)\n",
		want: []string{"crash: *"}},
	{name: "reading /etc/passwd", code: "print(open('/etc/passwd').read())\n", want: []string{"rejected: use of 'open' is not allowed"}},
	{name: "reading a secret file (raw)", layer: raw, code: "print(open('{{OUTSIDE}}/secret.txt').read())\n", want: []string{"crash: PermissionError"}},
	{name: "reading /proc/self/environ", code: "print(open('/proc/self/environ').read())\n", want: []string{"rejected: use of 'open' is not allowed"}},
	{name: "reading every /proc/*/environ (raw)", layer: raw, code: `import os
for p in os.listdir('/proc'):
    try:
        print(p, open('/proc/%s/environ' % p, 'rb').read())
    except OSError:
        pass
`, want: []string{"", "crash: PermissionError"}}, // PermissionError: Landlock forbids even listing /proc
	{name: "reading /etc/passwd (raw)", layer: raw, code: "print(open('/etc/passwd').read())\n", want: []string{"crash: PermissionError"}},
	{name: "writing the system temp dir (raw)", layer: raw, code: "open('{{ESCAPE}}', 'w').write('x')\n", want: []string{"crash: PermissionError"},
		check: func(t *testing.T, r Result) {
			if _, err := os.Stat(escapePath); err == nil {
				os.Remove(escapePath)
				t.Errorf("the program wrote %s", escapePath)
			}
		}},
	{name: "writing outside its directory", code: "open('{{OUTSIDE}}/pwned', 'w').write('x')\n", want: []string{"rejected: use of 'open' is not allowed"}},
	{name: "writing outside its directory (raw)", layer: raw, code: "open('{{OUTSIDE}}/keep.txt', 'w').write('changed')\n", want: []string{"crash: PermissionError"}},
	{name: "its own directory is the working directory, and no file can be made even there (raw)", layer: raw,
		code: "import os\nprint(os.getcwd())\nopen('note', 'w').write('ok')\n", want: []string{"crash: PermissionError"},
		check: func(t *testing.T, r Result) {
			if !strings.Contains(r.Stdout, "/repot-sandbox-") {
				t.Errorf("stdout %q: not in its own directory", r.Stdout)
			}
		}},
	{name: "pathlib write", code: "import pathlib\npathlib.Path('../x').write_text('x')\n", want: []string{"rejected: import of 'pathlib' is not allowed"}},
	{name: "filling the disk", code: "f = open('fill', 'wb')\nwhile True:\n    f.write(b'0' * 1048576)\n", want: []string{"rejected: use of 'open' is not allowed"}},
	{name: "filling the disk (raw)", layer: raw, code: "f = open('fill', 'wb')\nwhile True:\n    f.write(b'0' * 1048576)\n", want: []string{"crash: PermissionError"}},
	{name: "outbound network", code: "import socket\nsocket.create_connection(('127.0.0.1', {{PORT}}), timeout=1)\n", want: []string{"rejected: import of 'socket' is not allowed"}},
	{name: "outbound network (raw)", layer: raw, code: "import socket\nsocket.create_connection(('127.0.0.1', {{PORT}}), timeout=1)\n",
		want: []string{"crash: OSError", "crash: ConnectionRefusedError", "crash: TimeoutError", "crash: PermissionError"}},
	{name: "urllib", code: "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{{PORT}}/')\n", want: []string{"rejected: import of 'urllib.request' is not allowed"}},
	{name: "binding a socket", code: "import socket\ns = socket.socket()\ns.bind(('0.0.0.0', 0))\ns.listen()\n", want: []string{"rejected: import of 'socket' is not allowed"}},
	{name: "binding a socket (raw)", layer: raw, code: "import socket\ns = socket.socket()\ns.bind(('127.0.0.1', {{PORT}}))\ns.listen()\nprint('bound in its own namespace')\n",
		want: []string{"", "crash: OSError", "crash: PermissionError"}},
	{name: "a gigabyte of output", code: "import sys\nchunk = 'x' * 1048576\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n", want: []string{FailureOutputLimit},
		check: func(t *testing.T, r Result) {
			if len(r.Stdout) > testOptions.MaxOutputBytes {
				t.Errorf("kept %d bytes of stdout, cap %d", len(r.Stdout), testOptions.MaxOutputBytes)
			}
		}},
	{name: "64 MiB of stderr", code: "import sys\nchunk = 'x' * 1048576\nfor _ in range(64):\n    sys.stderr.write(chunk)\nprint('moves = [1]')\n", want: []string{""},
		moves: []string{"1"},
		check: func(t *testing.T, r Result) {
			if len(r.Stderr) > testOptions.MaxStderrBytes {
				t.Errorf("kept %d bytes of stderr, cap %d", len(r.Stderr), testOptions.MaxStderrBytes)
			}
		}},
	{name: "invalid UTF-8", code: "import sys\nsys.stdout.buffer.write(b'\\xff\\xfe\\xc3 moves = [(0, 1), (1, 2)]\\n')\n", want: []string{""},
		moves: []string{"[0,1]", "[1,2]"},
		check: func(t *testing.T, r Result) {
			if !utf8.ValidString(r.Stdout) || !strings.Contains(r.Stdout, "\uFFFD") {
				t.Errorf("stdout %q not sanitised", r.Stdout)
			}
		}},
	{name: "lone surrogate", code: "print('\\ud800')\n", want: []string{"crash: UnicodeEncodeError"}},
	{name: "several competing moves lines", code: "print('moves = [(0, 1)]')\nprint('moves = [(0, 2), (2, 1)]')\nprint('debug')\nprint('moves = [(0, 1), (0, 2), (1, 2)]')\n",
		want: []string{""}, moves: []string{"[0,1]", "[0,2]", "[1,2]"}},
	{name: "ten million moves", code: "print('moves = ' + str([(0, 1)] * 10**7))\n", want: []string{FailureOutputLimit, FailureMemory, FailureTimeout}, timeout: shortTimeout},
	{name: "ten million moves streamed", code: "import sys\nsys.stdout.write('moves = [')\nfor _ in range(10**7):\n    sys.stdout.write('(0, 1), ')\nprint(']')\n",
		want: []string{FailureOutputLimit}, movesErr: "more than 100000 moves"},
	{name: "deeply nested lists", code: "x = []\nfor _ in range(100000):\n    x = [x]\nprint('moves =', x)\n", want: []string{"crash: RecursionError"}},
	{name: "deeply nested literal text", code: "print('moves = ' + '[' * 100000 + ']' * 100000)\n", want: []string{""}, movesErr: "deeper than 64"},
	{name: "exit(0) before printing", code: "exit(0)\nprint('moves =', [(0, 1)])\n", want: []string{""}, movesErr: "no `moves",
		check: func(t *testing.T, r Result) {
			if r.Stdout != "" || r.ExitCode != 0 {
				t.Errorf("stdout %q exit %d", r.Stdout, r.ExitCode)
			}
		}},
	{name: "sys.exit with a code", code: "import sys\nprint('moves = [1]')\nsys.exit(3)\n", want: []string{"crash: exit status 3"}},
	{name: "closing stdout", code: "import sys\nsys.stdout.close()\nprint('moves = [1]')\n", want: []string{"crash: ValueError"}},
	{name: "__subclasses__ escape", code: "for c in ().__class__.__base__.__subclasses__():\n    print(c)\n", want: []string{"rejected: access to attribute '__subclasses__' is not allowed"}},
	{name: "getattr escape", code: "o = getattr((), '__cla' + 'ss__')\n", want: []string{"rejected: getattr() with a computed attribute name is not allowed"}},
	{name: "getattr via alias", code: "g = getattr\nprint(g((), '__class__'))\n", want: []string{"rejected: *"}},
	{name: "format string escape", code: "print('{0.__class__.__base__}'.format(1))\n", want: []string{"rejected: *"}},
	{name: "__builtins__ escape", code: "__builtins__['open']('/etc/passwd')\n", want: []string{"rejected: use of '__builtins__' is not allowed"}},
	{name: "__import__", code: "__import__('os').system('id')\n", want: []string{"rejected: use of '__import__' is not allowed"}},
	{name: "eval", code: "eval(\"__import__('os')\")\n", want: []string{"rejected: *"}},
	{name: "exec in a string", code: "exec('import os')\n", want: []string{"rejected: use of 'exec' is not allowed"}},
	{name: "generator frame", code: "def g():\n    yield 1\nprint(g().gi_frame.f_globals)\n", want: []string{"rejected: access to attribute 'f_globals' is not allowed"}},
	{name: "io.FileIO through sys.stdout", code: "import sys\nprint(type(sys.stdout.buffer.raw)('/etc/passwd').read())\n", want: []string{"crash: AttributeError"}},
	{name: "io class of sys.stdout", code: "import sys\nprint(type(sys.stdout)('/etc/passwd').read())\n", want: []string{"crash: TypeError"}},
	{name: "private module attribute", code: "import random\nprint(random._os.environ)\n", want: []string{"crash: AttributeError"}},
	{name: "module reached through a module", code: "import enum\nprint(enum.sys.modules)\n", want: []string{"crash: AttributeError"}},
	{name: "denied helper", code: "from operator import attrgetter\nprint(attrgetter('x'))\n", want: []string{"crash: ImportError"}},
	{name: "ctypes", code: "import ctypes\nctypes.CDLL(None).system(b'id')\n", want: []string{"rejected: import of 'ctypes' is not allowed"}},
	{name: "dumping the environment", code: "import os\nprint(dict(os.environ))\n", want: []string{"rejected: import of 'os' is not allowed"}},
	{name: "dumping the environment (raw)", layer: raw, code: "import os\nprint(sorted(k for k in os.environ if k != 'LC_CTYPE'))\nprint(os.environ.get('{{CANARY_ENV}}'))\n", want: []string{""},
		check: func(t *testing.T, r Result) {
			// LC_CTYPE is set by python3 itself (PEP 538 locale coercion).
			if r.Stdout != "[]\nNone\n" {
				t.Errorf("environment not empty: %q", r.Stdout)
			}
		}},
	{name: "syntax error", code: "def (:\n", want: []string{"syntax_error: line 1: *"}},
	{name: "relative import", code: "from . import x\n", want: []string{"rejected: relative import is not allowed"}},
	{name: "match on a dunder", code: "match 1:\n    case object(__class__=c):\n        print(c)\n", want: []string{"rejected: *"}},
	{name: "open without the static check", layer: runtimeOnly, code: "print(open('/etc/passwd').read())\n", want: []string{"crash: NameError"}},
	{name: "os without the static check", layer: runtimeOnly, code: "import os\nprint(os.environ)\n", want: []string{"crash: ImportError"}},
	{name: "getattr dunder without the static check", layer: runtimeOnly, code: "print(getattr((), '__cla' + 'ss__'))\n", want: []string{"crash: AttributeError"}},
	{name: "__builtins__ without the static check", layer: runtimeOnly, code: "print(__builtins__['open'])\n", want: []string{"crash: KeyError"}},
	{name: "uncaught exception", code: "print('moves = [1]')\nraise ValueError('boom')\n", want: []string{"crash: ValueError"}, moves: []string{"1"}},
	{name: "well-behaved hanoi", code: hanoiProgram, want: []string{""},
		check: func(t *testing.T, r Result) {
			m, err := program.ParseMoves(r.Stdout, hanoiProgram)
			if err != nil || len(m) != 1023 {
				t.Errorf("ParseMoves: %d moves, %v", len(m), err)
			}
		}},
}

// shortTimeout is the wall-clock limit of the cases that expect a timeout.
const shortTimeout = 2 * time.Second

// escapePath is a file in the world-writable system temporary directory
// that a program must not be able to create.
var escapePath = filepath.Join(os.TempDir(), fmt.Sprintf("repot-sandbox-escape-%d", os.Getpid()))

// hanoiProgram is a typical, allowed planning program.
const hanoiProgram = `from typing import List, Tuple
from collections import deque
import sys

sys.setrecursionlimit(10000)

def hanoi(n: int, a: int, b: int, c: int, out: List[Tuple[int, int, int]]) -> None:
    if n == 0:
        return
    hanoi(n - 1, a, c, b, out)
    out.append((n, a, c))
    hanoi(n - 1, b, a, c, out)

if __name__ == "__main__":
    moves: List[Tuple[int, int, int]] = []
    hanoi(10, 0, 1, 2, moves)
    print("moves =", moves)
`

// testOptions are small limits that keep the catalogue quick. The
// wall-clock limit is generous so that a busy machine does not turn a
// program that must finish (or run out of memory) into a timeout; the cases
// that expect a timeout set shortTimeout, and CPU-bound ones also meet the
// 1s CPU limit.
var testOptions = Options{
	Timeout:        20 * time.Second,
	CPUTime:        time.Second,
	MemoryBytes:    128 << 20,
	MaxOutputBytes: 1 << 20,
	MaxStderrBytes: 16 << 10,
	MaxFileBytes:   64 << 10,
	Concurrency:    4,
}

// catalogueOptions are testOptions in the setting the environment asks
// for: REPOT_SANDBOX_ISOLATION (auto, namespaces, none) and
// REPOT_SANDBOX_LANDLOCK (auto, off). CI runs the catalogue as root with
// namespaces, with isolation none, and with isolation none and Landlock
// off as a non-root user (make sandbox-catalogue).
func catalogueOptions(t *testing.T) Options {
	opts := testOptions
	switch v := os.Getenv("REPOT_SANDBOX_ISOLATION"); v {
	case "", "auto":
	case "namespaces", "none":
		opts.Isolation = Isolation(v)
	default:
		t.Fatalf("REPOT_SANDBOX_ISOLATION=%q: want auto, namespaces or none", v)
	}
	switch v := os.Getenv("REPOT_SANDBOX_LANDLOCK"); v {
	case "", "auto":
	case "off":
		opts.Landlock = LandlockOff
	default:
		t.Fatalf("REPOT_SANDBOX_LANDLOCK=%q: want auto or off", v)
	}
	return opts
}

// TestAdversarialCatalogue runs every case in the setting catalogueOptions
// selects. Each must be contained: the expected failure, no secret in the
// output, nothing outside changed, no connection, no process left over.
func TestAdversarialCatalogue(t *testing.T) {
	opts := catalogueOptions(t)
	f := newFixture(t, opts)
	if opts.Isolation == IsolationNone && !strings.HasPrefix(f.sb.Mode(), "none, ") {
		t.Fatalf("Mode() = %q, want no namespaces", f.sb.Mode())
	}
	if opts.Landlock == LandlockOff && strings.Contains(f.sb.Mode(), "landlock ABI") {
		t.Fatalf("Mode() = %q, want Landlock off", f.sb.Mode())
	}
	if !hasSeccomp(f.sb.confinement) {
		t.Fatalf("Mode() = %q: the seccomp filter is not in force", f.sb.Mode())
	}
	t.Run("cases", func(t *testing.T) {
		for _, tc := range catalogue {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				runCase(t, f, tc)
			})
		}
	})
	f.checkWorld(t)
}

// runCase runs one catalogue entry in f's sandbox and checks containment.
func runCase(t *testing.T, f *fixture, tc adversary) {
	t.Helper()
	sb := *f.sb
	sb.policy = map[layer]string{checked: "full", runtimeOnly: "runtime", raw: "off"}[tc.layer]
	if tc.landlock && !strings.Contains(f.sb.Mode(), "landlock ABI") {
		t.Skipf("needs Landlock (have %s)", f.sb.Mode())
	}
	if tc.timeout > 0 {
		sb.opts.Timeout = tc.timeout
	}
	w := &processWatch{}
	sb.onStart = w.onStart
	code := f.expand(tc.code)
	r, err := sb.Run(context.Background(), code)
	if err != nil {
		t.Fatalf("Run: infrastructure error %v", err)
	}
	if !failureMatches(r.Failure, tc.want) {
		t.Errorf("Failure = %q, want one of %q\nstdout %.300q\nstderr %.600q", r.Failure, tc.want, r.Stdout, r.Stderr)
	}
	f.checkOutput(t, r)
	if left := waitNoLeftovers(w); len(left) > 0 {
		t.Errorf("processes outlived the run: %v", left)
	}
	if tc.moves != nil || tc.movesErr != "" {
		checkMoves(t, tc, r, code)
	}
	if tc.check != nil {
		tc.check(t, r)
	}
}

func checkMoves(t *testing.T, tc adversary, r Result, code string) {
	t.Helper()
	got, err := program.ParseMoves(r.Stdout, code)
	switch {
	case tc.movesErr != "":
		if err == nil || !strings.Contains(err.Error(), tc.movesErr) {
			t.Errorf("ParseMoves error = %v, want %q", err, tc.movesErr)
		}
	case err != nil:
		t.Errorf("ParseMoves: %v", err)
	default:
		var texts []string
		for _, m := range got {
			texts = append(texts, string(m))
		}
		if diff := cmp.Diff(tc.moves, texts); diff != "" {
			t.Errorf("moves (-want +got):\n%s", diff)
		}
	}
}

func TestCatalogueSize(t *testing.T) {
	n := 0
	for _, tc := range catalogue {
		if tc.layer == checked {
			n++
		}
	}
	if n < 30 {
		t.Errorf("catalogue has %d checked cases, want at least 30", n)
	}
}

func TestProgramTooLarge(t *testing.T) {
	f := newFixture(t, Options{MaxCodeBytes: 1000, Concurrency: 1})
	r, err := f.sb.Run(context.Background(), "#"+strings.Repeat("x", 1000))
	if err != nil {
		t.Fatal(err)
	}
	if want := "rejected: program larger than 1000 bytes"; r.Failure != want {
		t.Errorf("Failure = %q, want %q", r.Failure, want)
	}
}

func TestCancelledContextIsNotAModelFailure(t *testing.T) {
	f := newFixture(t, Options{Timeout: 30 * time.Second, Concurrency: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := f.sb.Run(ctx, "while True: pass\n")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
	f.checkWorld(t)
}

func TestMissingInterpreterIsAnError(t *testing.T) {
	_, err := NewPython(Options{Python: "/nonexistent/python3", TempDir: t.TempDir()})
	if err == nil {
		t.Fatal("NewPython with a missing interpreter succeeded")
	}
}
