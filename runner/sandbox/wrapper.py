# Trusted wrapper that runs one model program inside the sandboxed python3
# process. It is passed with -c (it is ours, not the model's); the model's
# program arrives on stdin. Steps: set rlimits, read the program, check it
# statically (import allowlist, banned names, no dunder access), then execute
# it with restricted builtins and proxied modules. Progress and the outcome
# are reported as tab-separated lines on fd 3, a pipe the program cannot
# name; fd 4 is the run's directory. argv: cpu_seconds address_space_bytes file_size_bytes open_files
# processes max_code_bytes policy, where policy is "full" (static check and
# restricted execution), "runtime" (restricted execution only) or "off"
# (plain exec; tests use the last two to exercise the inner layers alone).
import sys
import os
import resource

STATUS_FD = 3
DIR_FD = 4  # the run's directory, opened by the runner

# Move into the run's directory through the descriptor, which works even
# when the path leading to it is not searchable by this uid.
os.fchdir(DIR_FD)
os.close(DIR_FD)


def status(*fields):
    try:
        os.write(STATUS_FD, ("\t".join(str(f) for f in fields).replace("\n", " ") + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def set_limits(cpu, mem, fsize, nofile, nproc):
    limits = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_AS, mem, mem),
        (resource.RLIMIT_FSIZE, fsize, fsize),
        (resource.RLIMIT_NOFILE, nofile, nofile),
        (resource.RLIMIT_NPROC, nproc, nproc),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    for res, soft, hard in limits:
        _, cur_hard = resource.getrlimit(res)
        if cur_hard != resource.RLIM_INFINITY:
            hard = min(hard, cur_hard)
            soft = min(soft, hard)
        resource.setrlimit(res, (soft, hard))


def landlock():
    """Confines the process with Landlock where the kernel offers it: files
    may be read only beneath the interpreter's library directories and
    written only beneath the run's directory; with ABI >= 4 no TCP bind or
    connect; with ABI >= 6 no signals to processes outside and no abstract
    unix sockets. Returns a description for the runner's Mode()."""
    try:
        import ctypes
    except ImportError:
        return "no landlock (no ctypes)"
    libc = ctypes.CDLL(None, use_errno=True)
    syscall = libc.syscall
    syscall.restype = ctypes.c_long
    create, add_rule, restrict_self = 444, 445, 446
    abi = syscall(create, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    if abi < 1:
        return "no landlock"
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
    ruleset = syscall(create, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return "no landlock (create: errno %d)" % ctypes.get_errno()

    def allow(path, rights):
        try:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            return
        try:
            if not os.path.isdir(path):
                rights &= file_rights
            rule = Beneath(rights, fd)
            if syscall(add_rule, ctypes.c_int(ruleset), ctypes.c_int(1), ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule " + path)
        finally:
            os.close(fd)

    try:
        allow(".", fs_all)
        read_paths = set(p for p in sys.path if p)
        read_paths.update(["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache"])
        for p in sorted(read_paths):
            allow(p, read_rights)
        if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
            raise OSError(ctypes.get_errno(), "prctl")
        if syscall(restrict_self, ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    except OSError as e:
        return "no landlock (%s)" % e
    finally:
        os.close(ruleset)
    return "landlock ABI %d" % abi


CPU, MEM, FSIZE, NOFILE, NPROC, MAX_CODE = (int(a) for a in sys.argv[1:7])
POLICY = sys.argv[7]
set_limits(CPU, MEM, FSIZE, NOFILE, NPROC)
os.set_inheritable(STATUS_FD, False)
confinement = landlock()

data = sys.stdin.buffer.read(MAX_CODE + 1)
status("ready", confinement)
if len(data) > MAX_CODE:
    status("rejected", "program larger than %d bytes" % MAX_CODE)
    os._exit(0)
try:
    source = data.decode("utf-8")
except UnicodeDecodeError:
    status("rejected", "program is not valid UTF-8")
    os._exit(0)

# Modules a program may import. Each is handed over as a proxy holding only
# its public, non-module attributes (minus DENIED), so `random._os` and
# `enum.sys` lead nowhere; `sys` is replaced by a small safe subset.
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
# Non-dunder attributes that reach frames, code or globals.
BANNED_ATTRS = {
    "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace",
    "tb_frame", "tb_next", "gi_frame", "gi_code", "cr_frame", "cr_code",
    "ag_frame", "ag_code", "co_code", "co_consts", "_getframe",
    "_current_frames", "format_map",
}


def is_dunder(name):
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


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


def check(tree):
    """Returns the first policy violation in tree as a reason, or None."""
    nodes = walk(tree)
    attr_calls = set()
    # A string that is a statement of its own (a docstring) is never used.
    inert = set(id(n.value) for n in nodes if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))
    for node in nodes:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ATTR_BUILTINS):
            if (len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)
                    or not isinstance(node.args[1].value, str)):
                return "%s() with a computed attribute name is not allowed" % node.func.id
            if node.args[1].value.startswith("_"):
                return "%s() of %r is not allowed" % (node.func.id, node.args[1].value)
            attr_calls.add(id(node.func))
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
            if is_dunder(node.attr) and node.attr not in ALLOWED_DUNDER_ATTRS:
                return "access to attribute %r is not allowed" % node.attr
            if node.attr in BANNED_ATTRS:
                return "access to attribute %r is not allowed" % node.attr
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in inert:
            for word in dunder_words(node.value):
                if word not in ("__main__", "__init__", "__name__"):
                    return "string mentioning %r is not allowed" % word
            if "{" in node.value and "__" in node.value:
                return "format string with a dunder field is not allowed"
        elif hasattr(ast, "MatchClass") and isinstance(node, ast.MatchClass):
            for a in node.kwd_attrs:
                if a.startswith("_"):
                    return "match on attribute %r is not allowed" % a
    return None


import _ast as ast  # the C module; the ast package costs ~7 ms to import

try:
    tree = compile(source, "<program>", "exec", ast.PyCF_ONLY_AST)
except SyntaxError as e:
    status("syntax", "line %s: %s" % (e.lineno, e.msg))
    os._exit(0)
except (RecursionError, MemoryError, ValueError) as e:
    status("syntax", "cannot parse: %s" % type(e).__name__)
    os._exit(0)

if POLICY == "full":
    reason = check(tree)
    if reason:
        status("rejected", reason)
        os._exit(0)

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
    _real_import(name, None, None, (), 0)
    if fromlist:
        return _proxy(sys.modules[name])
    return _proxy(sys.modules[name.split(".")[0]])


def _attr_guard(fn):
    def guarded(obj, name, *rest):
        if not isinstance(name, str) or name.startswith("_"):
            raise AttributeError("attribute %r is not accessible" % (name,))
        return fn(obj, name, *rest)
    return guarded


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

program = types.ModuleType("__main__")
program.__dict__["__builtins__"] = safe_builtins if POLICY != "off" else builtins
sys.modules["__main__"] = program
sys.stdin = io.StringIO("")
code = compile(tree, "<program>", "exec")
del data, source, tree

exit_code = 0
try:
    exec(code, program.__dict__)
    status("done")
except SystemExit as e:
    c = e.code
    if c is None:
        exit_code = 0
    elif isinstance(c, int):
        exit_code = c & 0xFF
    else:
        try:
            sys.stderr.write(str(c) + "\n")
        except Exception:
            pass
        exit_code = 1
    status("exit", exit_code)
except MemoryError:
    status("memory")
    exit_code = 1
except BaseException as e:
    status("exception", type(e).__name__)
    try:
        tb = e.__traceback__.tb_next  # skip the wrapper's own frame
        sys.excepthook(type(e), e.with_traceback(tb), tb)
    except BaseException:
        pass
    exit_code = 1
for stream in (sys.stdout, sys.stderr):
    try:
        stream.flush()
    except BaseException:
        pass
os._exit(exit_code)
