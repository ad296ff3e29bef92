package sandbox

import (
	"strings"
	"testing"
)

// escapes are the attack classes found against the allowlist-only sandbox:
// ways past the static check and the restricted builtins, ways out of the
// wall clock, and what a program can do in the weakest runner pod (uid
// 65532, no capabilities, no user namespaces, no Landlock). Each must be
// contained in every setting.
var escapes = []adversary{
	// Frame walking with getattr and constant names.
	{name: "generator frame via getattr", code: "def g():\n    yield 1\nf = getattr(g(), 'gi_frame')\nprint(getattr(f, 'f_globals'))\n",
		want: []string{"rejected: getattr() of 'gi_frame' is not allowed"}},
	{name: "coroutine frame via getattr", code: "async def c():\n    pass\nf = getattr(c(), 'cr_frame')\n",
		want: []string{"rejected: getattr() of 'cr_frame' is not allowed"}},
	{name: "async generator frame via attribute", code: "async def a():\n    yield 1\nprint(a().ag_frame.f_back)\n",
		want: []string{"rejected: access to attribute *"}},
	{name: "traceback frame via getattr", code: "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    tb = getattr(e, '__traceback__')\n",
		want: []string{"rejected: getattr() of '__traceback__' is not allowed"}},
	{name: "traceback frame via tb_frame", code: "def f(t):\n    return t.tb_frame.f_back\n",
		want: []string{"rejected: access to attribute *"}},
	{name: "generator frame via getattr (runtime)", layer: runtimeOnly, code: "def g():\n    yield 1\nf = getattr(g(), 'gi' + '_frame')\n",
		want: []string{"crash: AttributeError"}},
	// Keywords in match class patterns.
	{name: "match class pattern on a frame attribute", code: "def g():\n    yield 1\nmatch g():\n    case object(gi_frame=f):\n        print(f)\n",
		want: []string{"rejected: match on attribute 'gi_frame' is not allowed"}},
	{name: "match class pattern walking every frame (runtime)", layer: runtimeOnly, code: `try:
    1 / 0
except ZeroDivisionError as e:
    match e:
        case object(__traceback__=tb):
            pass
f = tb.tb_frame
found = set()
allowed = {'abc', 'array', 'bisect', 'cmath', 'collections', 'collections.abc', 'copy', 'dataclasses', 'decimal',
           'enum', 'fractions', 'functools', 'heapq', 'itertools', 'json', 'math', 'numbers', 'operator', 'queue',
           'random', 're', 'statistics', 'string', 'sys', 'time', 'typing', '__main__'}
while f is not None:
    # Globals and locals only: every frame of standard-library code has the
    # interpreter's builtins (exec, __import__), which only the seccomp
    # filter makes harmless.
    for d in (f.f_globals, f.f_locals):
        for k in ('open', 'eval', 'compile', '__loader__', 'breakpoint', 'input'):
            if d.get(k) is not None:
                found.add(k)
        if '__import__' in d:
            try:
                d['__import__']('os')
                found.add('__import__ of os')
            except ImportError:
                pass
        for k, v in list(d.items()):
            if k == '__builtins__':
                continue
            if type(v).__name__ == 'module' and v.__name__ not in allowed:
                found.add('module ' + v.__name__)
            if type(v).__name__ == 'builtin_function_or_method':
                owner = v.__self__
                if type(owner).__name__ == 'module' and owner.__name__ not in ('builtins',) and owner.__name__ not in allowed:
                    found.add('function of ' + owner.__name__)
    f = f.f_back
print(sorted(found))
`, want: []string{""}, check: func(t *testing.T, r Result) {
		if r.Stdout != "[]\n" {
			t.Errorf("frames on the stack hold %s", r.Stdout)
		}
	}},
	// functools.wraps / update_wrapper copy attributes named by the caller.
	{name: "functools.update_wrapper copying __globals__", code: `import functools, json
d = {}
n = '_' + '_globals_' + '_'
W = type('W', (), {n: d})
functools.update_wrapper(W(), json.dumps, assigned=(n,), updated=(n,))
print(sorted(d)[:3], 'codecs' in d)
`, want: []string{""}, check: func(t *testing.T, r Result) {
		if r.Stdout != "[] False\n" {
			t.Errorf("update_wrapper copied globals: %q", r.Stdout)
		}
	}},
	{name: "functools.wraps still names the wrapper", code: "import functools\ndef deco(f):\n    @functools.wraps(f)\n    def w(*a):\n        return f(*a)\n    return w\n@deco\ndef solve():\n    return 1\nprint(solve.__name__, solve())\n",
		want: []string{""}, check: func(t *testing.T, r Result) {
			if r.Stdout != "solve 1\n" {
				t.Errorf("stdout %q", r.Stdout)
			}
		}},
	// object.__subclasses__.
	{name: "object.__subclasses__ through a computed format template", code: "t = '{0.' + '_' + '_subclasses_' + '_}'\nprint(t.format(object))\n",
		want: []string{"rejected: str.format on a computed template is not allowed (call it on a string literal)"}},
	{name: "object.__subclasses__ to os.system (runtime)", layer: runtimeOnly, code: `match object:
    case type(__subclasses__=sub):
        pass
for c in sub():
    if c.__name__ == '_wrap_close':
        g = c.__init__.__globals__
        print('system', g['system']('id; cat {{OUTSIDE}}/secret.txt'))
        print(g['open']('{{OUTSIDE}}/secret.txt', 0))
`, want: []string{"crash: PermissionError"}, check: func(t *testing.T, r Result) {
		if strings.Contains(r.Stdout, "uid=") {
			t.Errorf("a shell ran: %q", r.Stdout)
		}
	}},
	// Format strings that read attributes.
	{name: "format string reading a frame", code: "def g():\n    yield 1\nprint('{0.gi_frame.f_globals}'.format(g()))\n",
		want: []string{"rejected: format string reading an attribute or item is not allowed"}},
	{name: "format_map", code: "print('{x}'.format_map({'x': 1}))\n", want: []string{"rejected: access to attribute 'format_map' is not allowed"}},
	// from m import submodule falls back to sys.modules.
	{name: "from json import decoder", code: "from json import decoder\nprint(decoder.re)\n", want: []string{"crash: ImportError"}},
	{name: "from collections import abc is allowed", code: "from collections import abc\nprint(abc.Sequence.__name__)\n", want: []string{""}},
	// The wall clock: leaving the process group, then sleeping.
	{name: "setpgid to the parent's group, then sleep (raw)", layer: raw, timeout: shortTimeout, code: `import os, time
try:
    os.setpgid(0, os.getpgid(os.getppid()))
except OSError as e:
    print('refused', e.errno, flush=True)
try:
    os.setsid()
except OSError as e:
    print('refused', e.errno, flush=True)
time.sleep(600)
`, want: []string{FailureTimeout}, check: func(t *testing.T, r Result) {
		if r.Stdout != "refused 1\nrefused 1\n" {
			t.Errorf("stdout %q: setpgid/setsid were not refused", r.Stdout)
		}
	}},
	// Networking of every kind.
	{name: "UDP (raw)", layer: raw, code: "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b'x', ('127.0.0.1', {{PORT}}))\n",
		want: []string{"crash: PermissionError"}},
	{name: "pathname unix socket (raw)", layer: raw, code: "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/run/containerd/containerd.sock')\n",
		want: []string{"crash: PermissionError"}},
	{name: "abstract unix socket (raw)", layer: raw, code: "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('\\0repot')\n",
		want: []string{"crash: PermissionError"}},
	{name: "socketpair (raw)", layer: raw, code: "import socket\nprint(socket.socketpair())\n", want: []string{"crash: PermissionError"}},
	{name: "netlink socket (raw)", layer: raw, code: "import socket\ns = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)\n", want: []string{"crash: PermissionError"}},
	// The runner's environment, files, signals and memory.
	{name: "runner's /proc environ (raw)", layer: raw, code: "print(open('/proc/{{RUNNER_PID}}/environ', 'rb').read())\n", want: []string{"crash: PermissionError"}},
	{name: "runner's /proc mem and cmdline (raw)", layer: raw, code: "import os\nfd = os.open('/proc/{{RUNNER_PID}}/mem', os.O_RDONLY)\n", want: []string{"crash: PermissionError"}},
	{name: "listing /proc (raw)", layer: raw, code: "import os\nprint(os.listdir('/proc'))\n", want: []string{"crash: PermissionError"}},
	{name: "runner's 0600 file (raw)", layer: raw, code: "import os\nprint(os.read(os.open('{{OUTSIDE}}/secret.txt', os.O_RDONLY), 100))\n", want: []string{"crash: PermissionError"}},
	{name: "writing the runner's file (raw)", layer: raw, code: "import os\nos.open('{{OUTSIDE}}/keep.txt', os.O_WRONLY | os.O_TRUNC)\n", want: []string{"crash: PermissionError"}},
	{name: "signalling the runner (raw)", layer: raw, code: "import os, signal\nos.kill({{RUNNER_PID}}, 0)\nos.kill({{RUNNER_PID}}, signal.SIGCONT)\n", want: []string{"crash: PermissionError"}},
	{name: "signalling every process (raw)", layer: raw, code: "import os, signal\nos.kill(-1, signal.SIGCONT)\n", want: []string{"crash: PermissionError"}},
	{name: "pidfd to the runner (raw)", layer: raw, code: "import os\nos.pidfd_open({{RUNNER_PID}})\n", want: []string{"crash: PermissionError"}},
	{name: "ptrace and process_vm_readv on the runner (raw)", layer: raw, code: `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.ptrace(16, {{RUNNER_PID}}, 0, 0), ctypes.get_errno())
buf = ctypes.create_string_buffer(64)
class IOV(ctypes.Structure):
    _fields_ = [('base', ctypes.c_void_p), ('len', ctypes.c_size_t)]
local = IOV(ctypes.cast(buf, ctypes.c_void_p), 64)
remote = IOV(0x400000, 64)
print(libc.process_vm_readv({{RUNNER_PID}}, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0), ctypes.get_errno())
`, want: []string{""}, check: func(t *testing.T, r Result) {
		if r.Stdout != "-1 1\n-1 1\n" {
			t.Errorf("stdout %q, want both refused with EPERM", r.Stdout)
		}
	}},
	// Limits, priorities and signal-driven I/O: prlimit64 and setpriority
	// reach other processes of the same uid, and F_SETOWN/F_SETSIG with
	// O_ASYNC on stdout make the kernel send a chosen signal (SIGTERM) to a
	// chosen process (the runner, pid 1 in its pod) when the pipe drains.
	// The probes target the program itself or, harmlessly, the runner (with
	// SIGWINCH), so that only the filter, not the uid, refuses them; the
	// "high half" calls set bits the kernel ignores in a 32-bit argument.
	{name: "prlimit64, setpriority, sched and ioprio, F_SETOWN, F_SETSIG, O_ASYNC (raw)", layer: raw, code: `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
x86 = os.uname().machine == 'x86_64'
L = ctypes.c_long
class RL(ctypes.Structure):
    _fields_ = [('cur', ctypes.c_ulong), ('max', ctypes.c_ulong)]
class Owner(ctypes.Structure):
    _fields_ = [('type', ctypes.c_int), ('pid', ctypes.c_int)]
prlimit64, setpriority, fcntl, ioctl = (302, 141, 72, 16) if x86 else (261, 140, 25, 29)
sched_setaffinity, sched_setscheduler, ioprio_set, setrlimit = (203, 144, 251, 160) if x86 else (122, 119, 30, 164)
runner, me = {{RUNNER_PID}}, os.getpid()
zero = RL(0, 0)
mask = ctypes.c_ulong(1)
param = ctypes.c_int(0)
def call(name, nr, *args):
    ctypes.set_errno(0)
    r = libc.syscall(L(nr), *[a if not isinstance(a, int) else L(a) for a in args])
    print(name, r, ctypes.get_errno())
call('prlimit64 runner core', prlimit64, runner, 4, ctypes.byref(zero), None)
call('prlimit64 own core', prlimit64, 0, 4, ctypes.byref(zero), None)
call('prlimit64 own pid', prlimit64, me, 4, None, ctypes.byref(RL()))
call('setrlimit own core', setrlimit, 4, ctypes.byref(zero))
call('setpriority runner', setpriority, 0, runner, 19)
call('setpriority own', setpriority, 0, 0, 19)
call('sched_setaffinity own', sched_setaffinity, 0, ctypes.sizeof(mask), ctypes.byref(mask))
call('sched_setscheduler own', sched_setscheduler, 0, 3, ctypes.byref(param))
call('ioprio_set own', ioprio_set, 1, 0, (3 << 13))
call('F_SETOWN runner', fcntl, 1, 8, runner)
call('F_SETOWN runner high half', fcntl, 1, (1 << 32) | 8, runner)
call('F_SETOWN_EX runner', fcntl, 1, 15, ctypes.byref(Owner(1, runner)))
call('F_SETSIG SIGWINCH', fcntl, 1, 10, 28)
call('F_SETSIG high half', fcntl, 1, (1 << 32) | 10, 28)
call('F_SETFL O_ASYNC', fcntl, 1, 4, 0o20000 | os.O_WRONLY)
call('FIOASYNC', ioctl, 1, 0x5452, ctypes.byref(ctypes.c_int(1)))
`, want: []string{""}, check: func(t *testing.T, r Result) {
		lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
		for _, line := range lines {
			if !strings.HasSuffix(line, " -1 1") {
				t.Errorf("not refused with EPERM: %q", line)
			}
		}
		if len(lines) != 16 {
			t.Errorf("stdout %q: want 16 lines", r.Stdout)
		}
	}},
	{name: "reading its own limits, F_GETFL and F_SETFL O_NONBLOCK still work (raw)", layer: raw, code: `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
x86 = os.uname().machine == 'x86_64'
L = ctypes.c_long
class RL(ctypes.Structure):
    _fields_ = [('cur', ctypes.c_ulong), ('max', ctypes.c_ulong)]
prlimit64, fcntl = (302, 72) if x86 else (261, 25)
old = RL()
print('prlimit64 get', libc.syscall(L(prlimit64), L(0), L(9), None, ctypes.byref(old)), old.cur == old.max)
flags = libc.syscall(L(fcntl), L(2), L(3), L(0))
print('F_GETFL', flags >= 0)
print('F_SETFL O_NONBLOCK', libc.syscall(L(fcntl), L(2), L(4), L(flags | os.O_NONBLOCK)))
print('F_SETFD', libc.syscall(L(fcntl), L(2), L(2), L(1)))
`, want: []string{""}, check: func(t *testing.T, r Result) {
		if want := "prlimit64 get 0 True\nF_GETFL True\nF_SETFL O_NONBLOCK 0\nF_SETFD 0\n"; r.Stdout != want {
			t.Errorf("stdout %q, want %q", r.Stdout, want)
		}
	}},
	// Processes, threads, exec.
	{name: "execv /bin/sh (raw)", layer: raw, code: "import os\nos.execv('/bin/sh', ['sh', '-c', 'id'])\n", want: []string{"crash: PermissionError"}},
	{name: "a thread (raw)", layer: raw, code: "import threading\nthreading.Thread(target=print, args=('thread',)).start()\n", want: []string{"crash: RuntimeError"}},
	{name: "clone3 is ENOSYS, clone refused (raw)", layer: raw, code: `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print(libc.syscall(435, 0, 0), ctypes.get_errno())
print(libc.syscall(56 if __import__('os').uname().machine == 'x86_64' else 220, 17, 0, 0, 0, 0), ctypes.get_errno())
`, want: []string{""}, check: func(t *testing.T, r Result) {
		if r.Stdout != "-1 38\n-1 1\n" {
			t.Errorf("stdout %q, want clone3 ENOSYS and clone EPERM", r.Stdout)
		}
	}},
	// The kernel's namespace, mount, key, BPF, io_uring and perf interfaces.
	{name: "unshare, mount, keyctl, bpf, io_uring, perf (raw)", layer: raw, code: `import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
x86 = os.uname().machine == 'x86_64'
calls = {'unshare': 272 if x86 else 97, 'mount': 165 if x86 else 40, 'keyctl': 250 if x86 else 219,
         'bpf': 321 if x86 else 280, 'io_uring_setup': 425, 'perf_event_open': 298 if x86 else 241,
         'setns': 308 if x86 else 268, 'userfaultfd': 323 if x86 else 282}
for name, nr in sorted(calls.items()):
    r = libc.syscall(nr, 0, 0, 0, 0, 0)
    print(name, r, ctypes.get_errno())
`, want: []string{""}, check: func(t *testing.T, r Result) {
		for _, line := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
			if !strings.HasSuffix(line, " -1 1") {
				t.Errorf("not refused with EPERM: %q", line)
			}
		}
		if n := strings.Count(r.Stdout, "\n"); n != 8 {
			t.Errorf("stdout %q: want 8 lines", r.Stdout)
		}
	}},
	// Descriptors and the status pipe.
	{name: "only stdout and stderr are open (raw)", layer: raw, code: `import os
fds = []
for fd in range(256):
    try:
        os.fstat(fd)
        fds.append(fd)
    except OSError:
        pass
print(fds)
`, want: []string{""}, check: func(t *testing.T, r Result) {
		if r.Stdout != "[1, 2]\n" {
			t.Errorf("open descriptors %q, want [1, 2]", r.Stdout)
		}
	}},
	{name: "forging a status (raw)", layer: raw, code: "import os\nfor fd in (3, 4, 5):\n    try:\n        os.write(fd, b'rejected\\tforged\\n')\n    except OSError:\n        pass\nraise ValueError('real')\n",
		want: []string{"crash: ValueError"}},
	{name: "the runner's environment is not inherited (raw)", layer: raw, code: "import os\nprint(os.environ.get('REPOT_API_KEY'), os.environ.get('AWS_SECRET_ACCESS_KEY'), os.environ.get('{{CANARY_ENV}}'))\n", want: []string{""},
		check: func(t *testing.T, r Result) {
			if r.Stdout != "None None None\n" {
				t.Errorf("stdout %q", r.Stdout)
			}
		}},
}

func init() { catalogue = append(catalogue, escapes...) }
