# The zygote: a warm, trusted python3 process that forks one fresh child per
# model program. It is passed with -c (it is ours, not the model's) and runs
# with an empty environment, so nothing secret is ever in its memory.
#
# argv: cpu_seconds address_space_bytes file_size_bytes open_files processes
# max_code_bytes landlock(auto|off) filter_hex, where filter_hex is the
# seccomp-bpf program (struct sock_filter array) the runner assembled.
#
# fd 3 is a SOCK_SEQPACKET unix socket to the runner. Per program the runner
# sends one message "run <policy>" with five descriptors: the program (a pipe
# to read), stdout, stderr, a status pipe and the run's directory. The zygote
# forks, answers "pid N", waits for the child to exit without reaping it
# (waitid WNOWAIT, so the pid and the process group cannot be reused while
# the runner kills leftovers), answers "exited", waits for "reap", reaps the
# child and answers "status WAITSTATUS CPU_NS".
#
# The child, before it reads the program: joins its own process group, dies
# with the zygote, keeps only stdout, stderr, the program pipe and the status
# pipe (everything else is closed), enters the run's directory, sets
# rlimits, restricts itself with Landlock (where available) and installs the
# seccomp filter (with no_new_privs). Then it reports "ready", reads, parses
# and checks the program, reports "start" and closes the status pipe and
# the program pipe, so the program itself holds only fds 1 and 2 and cannot
# write a status. What the program does after that is judged only by its
# exit status and its output.
import sys
import os
import resource
import gc
import socket
import ctypes
import _ast as ast  # the C module; the ast package costs ~7 ms to import

CTRL_FD = 3

CPU, MEM, FSIZE, NOFILE, NPROC, MAX_CODE = (int(a) for a in sys.argv[1:7])
LANDLOCK_MODE = sys.argv[7]
FILTER = bytes.fromhex(sys.argv[8])

libc = ctypes.CDLL(None, use_errno=True)
_syscall = libc.syscall
_syscall.restype = ctypes.c_long
_prctl = libc.prctl
_prctl.restype = ctypes.c_int
UL = ctypes.c_ulong


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


_filter_buf = ctypes.create_string_buffer(FILTER, len(FILTER))
FPROG = SockFprog(len(FILTER) // 8, ctypes.cast(_filter_buf, ctypes.c_void_p))


def landlock_ruleset():
    """Builds, once, a Landlock ruleset that lets a child read beneath the
    interpreter's library directories and write nowhere, with no TCP bind or
    connect (ABI >= 4) and no abstract unix sockets or signals outside
    (ABI >= 6). Returns (fd or -1, description)."""
    if LANDLOCK_MODE == "off":
        return -1, "landlock off"
    create, add_rule = 444, 445
    abi = _syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return -1, "no landlock"
    fs_all = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
    if abi >= 2:
        fs_all |= 1 << 13  # REFER
    if abi >= 3:
        fs_all |= 1 << 14  # TRUNCATE
    if abi >= 5:
        fs_all |= 1 << 15  # IOCTL_DEV
    file_rights = fs_all & ((1 << 0) | (1 << 1) | (1 << 2) | (1 << 14) | (1 << 15))
    read_rights = (1 << 0) | (1 << 2) | (1 << 3)  # EXECUTE, READ_FILE, READ_DIR

    class Attr(ctypes.Structure):
        _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]

    class Beneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    attr = Attr(fs_all, 0, 0)
    size = 8
    if abi >= 4:
        attr.net = 1 | 2  # BIND_TCP, CONNECT_TCP: no rule allows any port
        size = 16
    if abi >= 6:
        attr.scoped = 1 | 2  # ABSTRACT_UNIX_SOCKET, SIGNAL
        size = 24
    ruleset = _syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return -1, "no landlock (create: errno %d)" % ctypes.get_errno()
    read_paths = set(p for p in sys.path if p)
    read_paths.update(["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache"])
    for path in sorted(read_paths):
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            rights = read_rights if os.path.isdir(path) else read_rights & file_rights
            rule = Beneath(rights, fd)
            if _syscall(add_rule, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                os.close(ruleset)
                return -1, "no landlock (add_rule: errno %d)" % ctypes.get_errno()
        finally:
            os.close(fd)
    os.set_inheritable(ruleset, False)
    return ruleset, "landlock ABI %d" % abi


# Modules a program may import. Each is handed over as a proxy holding only
# its public, non-module attributes (minus DENIED), so `random._os` and
# `enum.sys` lead nowhere; `sys` is replaced by a small safe subset. All of
# them are imported here, once: a child cannot open files (seccomp), so it
# could not import them lazily.
ALLOWED = {
    "abc", "array", "bisect", "cmath", "collections", "collections.abc", "copy",
    "dataclasses", "decimal", "enum", "fractions", "functools", "heapq",
    "itertools", "json", "math", "numbers", "operator", "queue", "random", "re",
    "statistics", "string", "sys", "time", "typing",
}
DENIED = {
    "operator": {"attrgetter", "methodcaller"},
    "string": {"Formatter"},
    "typing": {"get_type_hints", "ForwardRef", "get_overloads"},
    "random": {"SystemRandom"},
    # They copy attributes named by the caller, dunders included.
    "functools": {"wraps", "update_wrapper", "WRAPPER_ASSIGNMENTS", "WRAPPER_UPDATES"},
}
SYS_ATTRS = {
    "setrecursionlimit", "getrecursionlimit", "stdout", "stderr", "maxsize",
    "version_info", "version", "float_info", "int_info", "getsizeof", "intern",
    "byteorder", "set_int_max_str_digits", "get_int_max_str_digits", "hexversion",
}
BANNED_NAMES = {
    "open", "eval", "exec", "compile", "__import__", "globals", "locals", "vars",
    "breakpoint", "input", "help", "memoryview", "copyright", "credits",
    "license",
}
ATTR_BUILTINS = {"getattr", "setattr", "delattr", "hasattr"}
ALLOWED_DUNDER_ATTRS = {"__init__", "__name__"}
# Attributes of frames, tracebacks, generators, coroutines, async generators
# and code objects: each leads to globals or to another frame.
BANNED_ATTRS = {
    "_getframe", "_current_frames", "format_map",
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace",
    "tb_frame", "tb_next", "gi_frame", "gi_code", "gi_yieldfrom",
    "cr_frame", "cr_code", "cr_await", "cr_origin", "ag_frame", "ag_code",
    "ag_await", "co_code", "co_consts", "co_names",
}


def is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def banned_attr(name):
    """Whether the attribute name is off limits, however it is reached
    (attribute syntax, getattr with a constant, a match class pattern)."""
    if is_dunder(name):
        return name not in ALLOWED_DUNDER_ATTRS
    return name in BANNED_ATTRS


def walk(tree):
    """Returns every node of tree, breadth first (ast.walk without importing
    the slow ast module)."""
    nodes = [tree]
    i = 0
    while i < len(nodes):
        n = nodes[i]
        i += 1
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, list):
                nodes.extend(x for x in v if isinstance(x, ast.AST))
            elif isinstance(v, ast.AST):
                nodes.append(v)
    return nodes


LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
IDENT = LETTERS + "0123456789_"


def dunder_words(text):
    """Yields the dunder names (__x__) text mentions, like the regular
    expression __[A-Za-z][A-Za-z0-9_]*__ would find them."""
    i = text.find("__")
    while i >= 0:
        k = i + 2
        if k < len(text) and text[k] in LETTERS:
            while k < len(text) and text[k] in IDENT:
                k += 1
            end = text.rfind("__", i + 3, k)
            if end >= 0:
                yield text[i:end + 2]
                i = text.find("__", end + 2)
                continue
        i = text.find("__", i + 2)


def field_access(text):
    """Whether a str.format template reads an attribute or an item of an
    argument ({0.x}, {a[k]}): that is getattr with a name the static check
    cannot see."""
    i = text.find("{")
    while i >= 0:
        if text.startswith("{{", i):
            i = text.find("{", i + 2)
            continue
        j = i + 1
        while j < len(text) and text[j] not in "}:!":
            if text[j] in ".[":
                return True
            j += 1
        i = text.find("{", j)
    return False


def check(tree):
    """Returns the first policy violation in tree as a reason, or None."""
    nodes = walk(tree)
    attr_calls = set()
    format_receivers = set()
    # A string that is a statement of its own (a docstring) is never used.
    inert = set(id(n.value) for n in nodes if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    for node in nodes:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ATTR_BUILTINS):
            if (len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)
                    or not isinstance(node.args[1].value, str)):
                return "%s() with a computed attribute name is not allowed" % node.func.id
            if node.args[1].value.startswith("_") or banned_attr(node.args[1].value):
                return "%s() of %r is not allowed" % (node.func.id, node.args[1].value)
            attr_calls.add(id(node.func))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "format" and isinstance(node.func.value, ast.Constant)
                and isinstance(node.func.value.value, str)):
            format_receivers.add(id(node.func))
    for node in nodes:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name not in ALLOWED:
                    return "import of %r is not allowed" % alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                return "relative import is not allowed"
            if node.module not in ALLOWED:
                return "import of %r is not allowed" % node.module
            for alias in node.names:
                if alias.name.startswith("_"):
                    return "import of %r from %r is not allowed" % (alias.name, node.module)
        elif isinstance(node, ast.Name):
            if node.id in BANNED_NAMES:
                return "use of %r is not allowed" % node.id
            if node.id in ATTR_BUILTINS and id(node) not in attr_calls:
                return "use of %r is not allowed" % node.id
            if is_dunder(node.id):
                ok = node.id == "__name__" or (node.id == "__slots__" and isinstance(node.ctx, ast.Store))
                if not ok:
                    return "use of %r is not allowed" % node.id
        elif isinstance(node, ast.Attribute):
            if banned_attr(node.attr):
                return "access to attribute %r is not allowed" % node.attr
            if node.attr == "format" and id(node) not in format_receivers:
                return "str.format on a computed template is not allowed (call it on a string literal)"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inert:
            for word in dunder_words(node.value):
                if word not in ("__main__", "__init__", "__name__"):
                    return "string mentioning %r is not allowed" % word
            if "{" in node.value and "__" in node.value:
                return "format string with a dunder field is not allowed"
            if field_access(node.value):
                return "format string reading an attribute or item is not allowed"
        elif hasattr(ast, "MatchClass") and isinstance(node, ast.MatchClass):
            for a in node.kwd_attrs:
                if a.startswith("_") or banned_attr(a):
                    return "match on attribute %r is not allowed" % a
    return None


import builtins
import io
import types

_real_import = builtins.__import__
_proxies = {}


def _exit(code=None):
    raise SystemExit(code)


def _writer(stream, binary=None):
    """A stand-in for sys.stdout/stderr that can write but hands out no
    io object: type(sys.stdout.buffer.raw) would be io.FileIO, an `open`."""

    class Writer:
        __slots__ = ()
        encoding = "utf-8"
        if binary is not None:
            buffer = binary

        def write(self, s):
            return stream.write(s)

        def writelines(self, lines):
            stream.writelines(lines)

        def flush(self):
            stream.flush()

        def close(self):
            stream.close()

        def isatty(self):
            return False

    return Writer()


def _sys_proxy():
    p = types.ModuleType("sys")
    for k in SYS_ATTRS:
        if hasattr(sys, k):
            setattr(p, k, getattr(sys, k))
    p.stdout = _writer(sys.stdout, _writer(sys.stdout.buffer))
    p.stderr = _writer(sys.stderr, _writer(sys.stderr.buffer))
    p.exit = _exit
    p.argv = ["program"]
    p.stdin = io.StringIO("")
    return p


def _proxy(mod):
    name = mod.__name__
    if name in _proxies:
        return _proxies[name]
    if name == "sys":
        p = _sys_proxy()
    else:
        p = types.ModuleType(name)
        denied = DENIED.get(name, ())
        for k in dir(mod):
            if k.startswith("_") or k in denied:
                continue
            try:
                v = getattr(mod, k)
            except Exception:
                continue
            if isinstance(v, types.ModuleType):
                if v.__name__ not in ALLOWED or v.__name__ != name + "." + k:
                    continue
                v = _proxy(v)
            setattr(p, k, v)
    _proxies[name] = p
    return p


def _safe_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level != 0:
        raise ImportError("relative import is not allowed")
    if name not in ALLOWED:
        raise ImportError("import of %r is not allowed" % name)
    if fromlist:
        p = _proxies[name]
        # A name the proxy lacks would make `from m import x` fall back to
        # sys.modules["m.x"], the real submodule: refuse it here.
        for k in fromlist:
            if not isinstance(k, str) or k == "*" or k not in p.__dict__:
                raise ImportError("cannot import %r from %r" % (k, name))
        return p
    return _proxies[name.split(".")[0]]


def _attr_guard(fn):
    def guarded(obj, name, *rest):
        if not isinstance(name, str) or name.startswith("_") or banned_attr(name):
            raise AttributeError("attribute %r is not accessible" % (name,))
        return fn(obj, name, *rest)
    return guarded


# Everything a child needs is loaded now, while files can still be opened.
for _m in sorted(ALLOWED):
    _real_import(_m)
    _proxy(sys.modules[_m])
for _m in ("unicodedata", "encodings.ascii", "encodings.latin_1", "encodings.utf_16", "encodings.utf_32"):
    try:
        _real_import(_m)
    except ImportError:
        pass

def _safe_wraps(wrapped, assigned=None, updated=None):
    """functools.wraps that copies the name and docstring only."""
    def decorate(wrapper):
        return _safe_update_wrapper(wrapper, wrapped)
    return decorate


def _safe_update_wrapper(wrapper, wrapped, assigned=None, updated=None):
    for k in ("__name__", "__qualname__", "__doc__"):
        try:
            v = getattr(wrapped, k)
            if isinstance(v, str) or v is None:
                setattr(wrapper, k, v)
        except (AttributeError, TypeError):
            pass
    return wrapper


_proxies["functools"].wraps = _safe_wraps
_proxies["functools"].update_wrapper = _safe_update_wrapper

safe_builtins = {}
for k, v in builtins.__dict__.items():
    if k in BANNED_NAMES or (is_dunder(k) and k != "__build_class__"):
        continue
    safe_builtins[k] = v
for k in ATTR_BUILTINS:
    safe_builtins[k] = _attr_guard(getattr(builtins, k))
safe_builtins["__import__"] = _safe_import
safe_builtins["exit"] = _exit
safe_builtins["quit"] = _exit

RULESET, LANDLOCK_INFO = landlock_ruleset()


def set_limits():
    limits = [
        (resource.RLIMIT_CPU, CPU, CPU + 1),
        (resource.RLIMIT_AS, MEM, MEM),
        (resource.RLIMIT_FSIZE, FSIZE, FSIZE),
        (resource.RLIMIT_NOFILE, NOFILE, NOFILE),
        (resource.RLIMIT_NPROC, NPROC, NPROC),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    for res, soft, hard in limits:
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(res, (soft, hard))


class _Child(BaseException):
    """Raised in a freshly forked child to unwind the zygote's frames."""


def spawn_spare():
    """Forks the next child ahead of its program (a spare), so the fork and
    its first copy-on-write faults are not on the program's critical path.
    The spare waits on a private socket for the run's descriptors. Returns
    (pid, socket)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        ours.close()
        raise _Child(theirs)
    theirs.close()
    return pid, ours


def serve():
    sock = socket.socket(fileno=CTRL_FD)
    spare, spare_sock = spawn_spare()
    while True:
        msg, fds, _, _ = socket.recv_fds(sock, 256, 8)
        if not msg:
            os._exit(0)
        policy = msg.decode().split(" ", 1)[1] if msg.startswith(b"run ") else ""
        if len(fds) != 5 or policy not in ("full", "runtime", "off"):
            for fd in fds:
                os.close(fd)
            sock.send(b"error bad request")
            continue
        for attempt in (1, 2):
            try:
                socket.send_fds(spare_sock, [policy.encode()], fds)
                break
            except OSError:
                # The spare died while it waited: replace it once.
                spare_sock.close()
                os.waitpid(spare, 0)
                spare, spare_sock = spawn_spare()
        else:
            for fd in fds:
                os.close(fd)
            sock.send(b"error spare")
            continue
        for fd in fds:
            os.close(fd)
        spare_sock.close()
        pid = spare
        sock.send(b"pid %d" % pid)
        # The next spare is forked and warmed now, while this program runs
        # (the runner is idle then), so that a program that follows at once
        # does not wait for it.
        spare, spare_sock = spawn_spare()
        while True:
            try:
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
                break
            except InterruptedError:
                continue
        sock.send(b"exited")
        while True:
            m = sock.recv(64)
            if not m:
                os._exit(0)
            if m == b"reap":
                break
        _, st, ru = os.wait4(pid, 0)
        cpu = int((ru.ru_utime + ru.ru_stime) * 1e9)
        sock.send(b"status %d %d" % (st, cpu))


# WARM is run by each spare while it waits, so that the pages a typical
# program touches (parser, checker, compiler, list and tuple growth, str of
# a long list) are already copied when the real program comes.
WARM = """
def h(n, a, b, c, out):
    if n:
        h(n - 1, a, c, b, out)
        out.append((n, a, c))
        h(n - 1, b, a, c, out)
moves = []
h(6, 0, 1, 2, moves)
text = "moves = " + str(moves)
"""


def wait_for_run(chan):
    """Runs in a spare: joins its own process group, dies with the zygote,
    warms up, and waits for the run. Returns (policy, fds)."""
    os.setpgid(0, 0)
    _prctl(1, UL(9), UL(0), UL(0), UL(0))  # PR_SET_PDEATHSIG SIGKILL
    if os.getppid() == 1:
        os._exit(1)
    try:
        tree = compile(WARM, "<warm>", "exec", ast.PyCF_ONLY_AST)
        check(tree)
        exec(compile(tree, "<warm>", "exec"), {"__builtins__": safe_builtins})
    except Exception:
        pass
    msg, fds, _, _ = socket.recv_fds(chan, 256, 8)
    chan.close()
    if not msg or len(fds) != 5:
        os._exit(1)
    return msg.decode(), fds


def confine(fds):
    """Runs in the child before any model text is read; returns the status
    fd and the program fd. Any failure here ends the child with no "ready"
    status, which the runner treats as a failure of the sandbox."""
    code_fd, out_fd, err_fd, st_fd, dir_fd = fds
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.fchdir(dir_fd)
    # Move the two pipes to 3 and 4, then close everything above them (the
    # control socket, the ruleset, the original descriptors) and stdin.
    os.dup2(code_fd, 100)
    os.dup2(st_fd, 101)
    if RULESET >= 0:
        os.dup2(RULESET, 102)
    os.dup2(100, 3, inheritable=False)
    os.dup2(101, 4, inheritable=False)
    if RULESET >= 0:
        os.dup2(102, 5, inheritable=False)
    os.closerange(6 if RULESET >= 0 else 5, 1 << 20)
    os.close(0)
    set_limits()
    if _prctl(38, UL(1), UL(0), UL(0), UL(0)) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    info = [LANDLOCK_INFO]
    if RULESET >= 0:
        if _syscall(446, ctypes.c_int(5), ctypes.c_uint32(0)) < 0:  # landlock_restrict_self
            info = ["no landlock (restrict: errno %d)" % ctypes.get_errno()]
        os.close(5)
    if _prctl(22, UL(2), ctypes.byref(FPROG), UL(0), UL(0)) != 0:  # PR_SET_SECCOMP, FILTER
        info.insert(0, "no seccomp (errno %d)" % ctypes.get_errno())
    elif _prctl(21, UL(0), UL(0), UL(0), UL(0)) == 2:  # PR_GET_SECCOMP
        info.insert(0, "seccomp")
    else:
        info.insert(0, "no seccomp (not in force)")
    return 4, 3, ", ".join(info)


def status(fd, *fields):
    try:
        os.write(fd, ("\t".join(str(f) for f in fields).replace("\n", " ") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def prepare(policy, fds):
    """Confines the child, reads and checks the program; returns the code
    object and the program's module, or ends the process."""
    st_fd, code_fd, info = confine(fds)
    status(st_fd, "ready", info)
    chunks, size = [], 0
    while size <= MAX_CODE:
        b = os.read(code_fd, 65536)
        if not b:
            break
        chunks.append(b)
        size += len(b)
    os.close(code_fd)
    data = b"".join(chunks)
    if len(data) > MAX_CODE:
        status(st_fd, "rejected", "program larger than %d bytes" % MAX_CODE)
        os._exit(0)
    try:
        source = data.decode("utf-8")
    except UnicodeDecodeError:
        status(st_fd, "rejected", "program is not valid UTF-8")
        os._exit(0)
    try:
        tree = compile(source, "<program>", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as e:
        status(st_fd, "syntax", "line %s: %s" % (e.lineno, e.msg))
        os._exit(0)
    except (RecursionError, MemoryError, ValueError) as e:
        status(st_fd, "syntax", "cannot parse: %s" % type(e).__name__)
        os._exit(0)
    if policy == "full":
        reason = check(tree)
        if reason:
            status(st_fd, "rejected", reason)
            os._exit(0)
    code = compile(tree, "<program>", "exec")
    program = types.ModuleType("__main__")
    program.__dict__["__builtins__"] = safe_builtins if policy != "off" else builtins
    sys.modules["__main__"] = program
    sys.stdin = io.StringIO("")
    status(st_fd, "start")
    os.close(st_fd)
    return code, program.__dict__


# _RUN executes the program. It is compiled into its own globals, which hold
# only a few builtins and stdout/stderr, so the frame that calls exec holds
# the code object and the program's own namespace and nothing else. Its
# result is the exit status; an uncaught exception is printed as a
# traceback without reading any source file.
_RUN = '''
def run(code, ns):
    status = 0
    try:
        exec(code, ns)
    except SystemExit as e:
        c = e.code
        if c is None:
            status = 0
        elif isinstance(c, int):
            status = c & 0xFF
        else:
            try:
                STDERR.write(str(c) + "\\n")
            except BaseException:
                pass
            status = 1
    except BaseException as e:
        try:
            STDOUT.flush()
        except BaseException:
            pass
        name = type(e).__name__
        try:
            lines = ["Traceback (most recent call last):"]
            tb = e.__traceback__.tb_next  # skip this frame
            while tb is not None:
                co = tb.tb_frame.f_code
                lines.append('  File "%s", line %s, in %s' % (co.co_filename, tb.tb_lineno, co.co_name))
                tb = tb.tb_next
            text = str(e)
            lines.append(name + (": " + text if text else ""))
            STDERR.write("\\n".join(lines[-60:]) + "\\n")
        except BaseException:
            try:
                STDERR.write("\\n" + name + "\\n")
            except BaseException:
                pass
        status = 1
    for stream in (STDOUT, STDERR):
        try:
            stream.flush()
        except BaseException:
            pass
    return status
'''


def _exit_hook(exit_now, holder):
    def at_exit():
        exit_now(holder[0])
    return at_exit


def _make_run():
    """Builds the function that runs the program, before any fork, so that
    no child pays for compiling it."""
    g = {"__builtins__": {"exec": exec, "isinstance": isinstance, "int": int, "str": str, "type": type,
                          "SystemExit": SystemExit, "BaseException": BaseException},
         "STDOUT": sys.stdout, "STDERR": sys.stderr}
    exec(compile(_RUN, "<run>", "exec"), g)
    return g["run"]


if __name__ == "__main__":
    _run = _make_run()
    # A child ends through os._exit, without the interpreter's slow
    # finalisation. Normally the bottom frame calls it after the program
    # has returned (below); should _run itself fail, an atexit hook that no
    # frame can reach does it instead, with status 1.
    _status = [1]
    import atexit
    atexit.register(_exit_hook(os._exit, _status))
    del atexit
    gc.collect()
    gc.freeze()
    try:
        serve()  # returns only in a child
    except _Child as c:
        _chan = c.args[0]
        del c
    _policy, _fds = wait_for_run(_chan)
    del _chan
    _code, _ns = prepare(_policy, _fds)
    # The zygote's globals, which the bottom frame of the stack and the
    # import and attribute guards share, keep only what those guards need:
    # no os, sys, socket, ctypes or control socket.
    _keep = {"_run", "_code", "_ns", "_status", "_policy", "__builtins__", "__name__",
             "ALLOWED", "_proxies", "banned_attr", "is_dunder", "ALLOWED_DUNDER_ATTRS", "BANNED_ATTRS", "_exit",
             "_safe_update_wrapper", "_keep"}
    for _k in list(globals()):
        if _k not in _keep and _k != "_k":
            del globals()[_k]
    if _policy != "off":
        _b = __builtins__.__dict__ if hasattr(__builtins__, "__dict__") else __builtins__
        # exec, eval, compile and __import__ stay: dataclasses, namedtuple and
        # lazy imports in the standard library need them.
        for _k in ("open", "breakpoint", "input", "help", "copyright", "credits", "license"):
            _b.pop(_k, None)
        del _b
    del _k, _keep, _policy
    _status[0] = _run(_code, _ns)
    # The program has returned and flushed its output; nothing of it runs
    # again (no finalizer, no atexit of its own). posix is already loaded,
    # so this import opens no file; only now does the bottom frame hold it.
    import posix
    posix._exit(_status[0])
