# -*- coding: utf-8 -*-
# The robot-md-mcp pyz's own __main__.py (build_pyz.py installs it in place of shiv's two-line one).
#
# It runs before shiv's bootstrap, which needs CPython 3.8+ syntax and would otherwise unpack ~100 MB
# before failing with an opaque ImportError on an interpreter the pyz has no binaries for. So:
#   1. check the interpreter and platform; if the pyz cannot serve them, print ONE line and exit 1
#      (this file therefore parses on CPython 2.7 and 3.x: no f-strings, no annotations);
#   2. pick the unpack root (SHIV_ROOT, else ~/.shiv, else a private cache dir) and say so once;
#   3. mark our unpacked copy "in use" and prune older unpacked copies of robot-md-mcp;
#   4. record the chosen platform for the .pth hook and `--version`, then hand over to shiv, with
#      its unpacking done on several threads (extract_site_packages below).
import os
import sys

NAME = "robot-md-mcp"
# {platform key: {"pythons": ["3.10", ...], "glibc": [2, 17] or "macos": [11, 0]}}, filled in per build.
TARGETS = {}  # build_pyz.py fills this in
# A file only our builds put at the root of their unpacked site-packages: how pruning tells our
# unpacked copies from other shiv apps' (never touched).
MARKER = "_robot_md_mcp_pyz.py"
# Unpacked copies of a differently named pyz (another version kept on purpose) are pruned only after
# this long unused; copies of the same file name (an updated download) as soon as nothing uses them.
OTHER_NAME_MAX_IDLE = 30 * 86400
SYSTEMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}
# Aliases for platform.machine() spellings of the same CPU.
MACHINES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


def platform_key(sys_platform, machine, pointer_bits):
    """`<sys.platform>-<machine>` as the pyz names its platform directories (e.g. linux-aarch64,
    darwin-arm64, win32-amd64), or None. A 32-bit interpreter on a 64-bit kernel (Raspberry Pi OS
    32-bit on a Pi 4/5 reports aarch64) is 32-bit: it cannot load 64-bit extensions."""
    if pointer_bits != 64:
        return None
    if sys_platform.startswith("linux"):  # CPython 2.7 says linux2
        sys_platform = "linux"
    cpu = MACHINES.get(machine.lower(), machine.lower())
    spelled = {
        "linux": {"x86_64": "x86_64", "aarch64": "aarch64"},
        "darwin": {"x86_64": "x86_64", "aarch64": "arm64"},
        "win32": {"x86_64": "amd64"},
    }
    name = spelled.get(sys_platform, {}).get(cpu)
    return None if name is None else sys_platform + "-" + name


def _version_tuple(text):
    parts = []
    for piece in text.split(".")[:2]:
        try:
            parts.append(int(piece))
        except ValueError:
            return None
    return tuple(parts) if len(parts) == 2 else None


def check(
    implementation,
    version,
    sys_platform,
    machine,
    pointer_bits,
    libc,
    os_release,
    free_threaded,
    targets=None,
):
    """(key, None) if this pyz can serve the interpreter described, else (None, what to install).

    libc is platform.libc_ver() on Linux (('', '') on musl); os_release is the macOS version."""
    targets = TARGETS if targets is None else targets
    key = platform_key(sys_platform, machine, pointer_bits)
    target = targets.get(key) if key else None
    if sys_platform == "darwin":
        hint = "install Python 3.12 from python.org or `brew install python`"
    elif sys_platform == "win32":
        hint = "install 64-bit Python 3.12 from python.org or the Microsoft Store"
    elif sys_platform.startswith("linux"):
        hint = "install a 64-bit python3.11+ from your distribution, or `uv python install 3.12`"
    else:
        hint = "`pipx install %s` may work where Python and a C compiler exist" % NAME
    if target and "glibc" in target:
        if libc[0] != "glibc":
            hint = "needs glibc: on musl (Alpine) use a glibc system or `pipx install %s`" % NAME
            target = None
        elif (_version_tuple(libc[1]) or (0, 0)) < tuple(target["glibc"]):
            hint = "needs glibc %d.%d+, this system has %s; try `pipx install %s`" % (
                tuple(target["glibc"]) + (libc[1], NAME)
            )
            target = None
    if target and "macos" in target:
        release = _version_tuple(os_release or "0.0") or (0, 0)
        if release == (10, 16):  # what macOS 11+ reports to programs built with an old SDK
            release = (11, 0)
        if release < tuple(target["macos"]):
            hint = "needs macOS %d.%d+; try `pipx install %s`" % (tuple(target["macos"]) + (NAME,))
            target = None
    want = "%d.%d" % tuple(version[:2])
    if target and implementation == "cpython" and want in target["pythons"] and not free_threaded:
        return key, None
    flavour = implementation if implementation == "cpython" else implementation + " (not CPython)"
    if free_threaded:
        flavour += " free-threaded"
    return None, "%s: needs %s; this is %s %s %s on %s %s - %s" % (
        NAME,
        supported(targets),
        sys.executable or "python",
        flavour,
        ".".join(map(str, version[:3])),
        sys_platform,
        machine or "?",
        hint,
    )


def supported(targets):
    """`CPython 3.10-3.14 on Linux (x86_64, aarch64; glibc 2.17+), macOS (...) or Windows (amd64)`."""
    pythons = sorted(set(p for t in targets.values() for p in t["pythons"]), key=_version_tuple)
    span = pythons[0] if len(pythons) == 1 else pythons[0] + "-" + pythons[-1]
    places = []
    for system in ("linux", "darwin", "win32"):
        keys = sorted(k for k in targets if k.startswith(system + "-"))
        if keys:
            extra = ["glibc %d.%d+" % tuple(targets[k]["glibc"]) for k in keys[:1] if "glibc" in targets[k]]
            places.append(
                "%s (%s)"
                % (SYSTEMS[system], "; ".join([", ".join(k.split("-", 1)[1] for k in keys)] + extra))
            )
    return "64-bit CPython %s on %s" % (span, " or ".join(places))


def describe_this_interpreter():
    """check()'s arguments for the running interpreter."""
    import platform
    import struct

    implementation = getattr(sys, "implementation", None)
    implementation = implementation.name if implementation else platform.python_implementation().lower()
    libc = platform.libc_ver() if sys.platform.startswith("linux") else ("", "")
    try:
        import sysconfig

        free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    except Exception:
        free_threaded = False
    return dict(
        implementation=implementation,
        version=tuple(sys.version_info[:3]),
        sys_platform=sys.platform,
        machine=platform.machine(),
        pointer_bits=8 * struct.calcsize("P"),
        libc=libc,
        os_release=platform.mac_ver()[0] if sys.platform == "darwin" else "",
        free_threaded=free_threaded,
    )


def platform_dirs(key, version):
    """The platform directories (relative to site-packages, most specific first) for a target; the
    .pth hook puts those that exist ahead of the shared tree."""
    py = "cp%d%d" % tuple(version[:2])
    return ["_platform/%s-%s" % (key, py), "_platform/" + key, "_platform/" + py]


def _private_dir(path):
    """Create path (0700) if needed; True if it is a directory we alone can write. A directory under
    the shared temp dir that someone else owns or can write could hand us their code to run."""
    try:
        if not os.path.isdir(path):
            os.makedirs(path, 0o700)
        if not os.access(path, os.W_OK | os.X_OK):
            return False
        if hasattr(os, "getuid"):
            st = os.stat(path)
            return st.st_uid == os.getuid() and not st.st_mode & 0o022
        return True
    except OSError:
        return False


def unpack_root(environ):
    """(root, None) where shiv should unpack, or (None, message). SHIV_ROOT wins; else ~/.shiv (shiv's
    default); else $XDG_CACHE_HOME/shiv; else <temp>/shiv-<user> - so a read-only or missing HOME works."""
    if environ.get("SHIV_ROOT"):
        return environ["SHIV_ROOT"], None
    import tempfile

    user = str(os.getuid()) if hasattr(os, "getuid") else environ.get("USERNAME", "user")
    candidates = []
    if environ.get("HOME") or sys.platform == "win32":
        candidates.append(os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".shiv"))
    if environ.get("XDG_CACHE_HOME"):
        candidates.append(os.path.join(environ["XDG_CACHE_HOME"], "shiv"))
    candidates.append(os.path.join(tempfile.gettempdir(), "shiv-" + user))
    for path in candidates:
        if _private_dir(path):
            return path, None
    return None, "%s: no writable folder to unpack into (tried %s); set SHIV_ROOT to one" % (
        NAME,
        ", ".join(candidates),
    )


# --- marking our unpacked copy in use, pruning unused ones -------------------------------------------
# Rule: an unpacked copy <root>/<name>_<build id> is removed only if (1) it holds MARKER (it is ours),
# (2) it is not the one this process uses, (3) no process holds its "<copy>.in-use" file - every run
# holds its own copy's from before shiv looks at the copy until the process exits (a shared flock on
# POSIX; on Windows an open handle, which makes deleting the file fail) - and (4) it came from a pyz of
# the same file name, or went unused (in-use file untouched) for OTHER_NAME_MAX_IDLE.
_held = []  # the open in-use file: closed (lock released) only when the process exits


def hold(copy_dir):
    """Take our copy's in-use mark; returns when held (waits out a pruner deleting that copy)."""
    path = copy_dir + ".in-use"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            import fcntl
        except ImportError:  # Windows: an open handle is the mark
            _held.append(fd)
            os.utime(path, None)
            return
        fcntl.flock(fd, fcntl.LOCK_SH)
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except OSError:
            same = False
        if same:  # not unlinked by a pruner while we waited: the mark is real
            _held.append(fd)
            os.utime(path, None)
            return
        os.close(fd)


def _try_claim(mark):
    """Exclusive hold on another copy's in-use file, or None while any process uses that copy."""
    try:
        import fcntl
    except ImportError:
        try:
            if os.path.exists(mark):
                os.remove(mark)  # fails while a process has it open
            return -1
        except OSError:
            return None
    try:
        fd = os.open(mark, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def prune(root, ours, now=None):
    """Remove unused unpacked copies of robot-md-mcp under root (see the rule above); best effort."""
    import re
    import shutil
    import time

    now = time.time() if now is None else now
    our_name = os.path.basename(ours).rsplit("_", 1)[0]
    removed = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return removed
    for name in names:
        copy = os.path.join(root, name)
        found = re.match(r"^(.+)_[0-9a-f]{64}$", name)
        if not found or copy == ours or not os.path.isfile(os.path.join(copy, "site-packages", MARKER)):
            continue
        mark = copy + ".in-use"
        if found.group(1) != our_name:
            try:
                idle = now - os.stat(mark if os.path.exists(mark) else copy).st_mtime
            except OSError:
                continue
            if idle < OTHER_NAME_MAX_IDLE:
                continue
        fd = _try_claim(mark)
        if fd is None:
            continue
        try:
            doomed = copy + ".pruning-%d" % os.getpid()
            os.rename(copy, doomed)  # atomic: a new run of that build now re-extracts instead
            shutil.rmtree(doomed, ignore_errors=True)
            for leftover in (mark, os.path.join(root, "." + name + "_lock")):
                if os.path.exists(leftover):
                    os.remove(leftover)
            removed.append(name)
        except OSError:
            pass
        finally:
            if fd >= 0:
                os.close(fd)
    return removed


# --- unpacking: shiv's extract_site_packages, on several threads -------------------------------------
# shiv 1.0.8 extracts ~1,550 files one after another, and on a first run that is most of the wait
# (1.1 s of 3.2 s on a 2-core VM, mostly creating files). zlib and file writes release the GIL, so
# other threads can create files meanwhile. Same contract as shiv's: under shiv's own lock file,
# into <copy>.tmp, then one rename, so a run killed midway leaves no half-unpacked copy in use.


def unpack_threads(cpus):
    """Two even on one core (one thread writes while the other inflates); at most six."""
    return max(2, min(6, cpus or 2))


def _member_path(root, name):
    """Where a zip member goes; only names inside root (shiv's own zips never have others)."""
    parts = name.rstrip("/").split("/")
    if name.startswith("/") or "\\" in name or ".." in parts or ":" in parts[0]:
        raise ValueError("refusing %r: it names a place outside the unpack folder" % name)
    return os.path.join(root, *parts)


def _folder(path):
    try:
        os.makedirs(path)
    except OSError:
        if not os.path.isdir(path):
            raise


def _write_members(archive, root, queue, failures):
    try:
        while not failures:  # after one failure the others stop too
            try:
                info = queue.pop()
            except IndexError:
                return
            path = _member_path(root, info.filename)
            if info.filename.endswith("/"):
                _folder(path)
                continue
            data = archive.read(info)  # ZipFile serialises the seek+read; inflating runs in parallel
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)
            try:
                fd = os.open(path, flags, 0o600)
            except OSError:  # its folder is not there yet: make it (another thread may, too)
                _folder(os.path.dirname(path))
                fd = os.open(path, flags, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            mode = info.external_attr >> 16
            if mode:
                os.chmod(path, mode & 0o7777)  # as shiv does: the permissions the pyz recorded
    except BaseException as error:  # handed to the main thread, which raises it
        failures.append(error)


def extract_site_packages(archive, target_path, compile_pyc=False, compile_workers=0, force=False):
    """Drop-in for shiv's _bootstrap.extract_site_packages (same arguments and result), except that
    a failure (a full disk, say) is one line on stderr and exit 1, not a traceback."""
    import shutil

    from _bootstrap.filelock import FileLock

    target = str(target_path)
    parent = os.path.dirname(target)
    tmp = target + ".tmp"
    try:
        if not os.path.isdir(parent):
            os.makedirs(parent)
        with FileLock(os.path.join(parent, "." + os.path.basename(target) + "_lock")):
            if os.path.exists(target) and not force:
                return  # another run unpacked it while we waited for the lock
            shutil.rmtree(tmp, ignore_errors=True)  # left by a run killed midway (we hold the lock)
            _unpack(archive, tmp)
            if compile_pyc:
                import compileall

                compileall.compile_dir(tmp, quiet=2, workers=compile_workers)
            if os.path.exists(target):
                shutil.rmtree(target)
            shutil.move(tmp, target)
    except (OSError, ValueError) as error:
        shutil.rmtree(tmp, ignore_errors=True)
        # one line, no traceback (and no `raise ... from`: this file parses on CPython 2.7)
        raise SystemExit("%s: could not unpack to %s: %s" % (NAME, target, error))  # noqa: B904
    except KeyboardInterrupt:  # Ctrl-C while unpacking: quietly, as the server itself does
        raise SystemExit(130)  # noqa: B904  # the next run clears the half-made .tmp


def _unpack(archive, root):
    import threading

    members = [i for i in archive.infolist() if i.filename.startswith("site-packages")]
    # list.pop() is atomic; the smallest are popped last, so the threads finish together
    queue = sorted(members, key=lambda i: i.file_size)
    failures = []
    threads = [
        threading.Thread(target=_write_members, args=(archive, root, queue, failures))
        for _ in range(unpack_threads(os.cpu_count() if hasattr(os, "cpu_count") else 2))
    ]
    for thread in threads:
        thread.daemon = True  # Ctrl-C ends the run at once; the next run clears the leftovers
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]


def main():
    this = describe_this_interpreter()
    key, problem = check(**this)
    if problem:
        sys.stderr.write(problem + "\n")
        sys.exit(1)
    root, problem = unpack_root(os.environ)
    if problem:
        sys.stderr.write(problem + "\n")
        sys.exit(1)
    os.environ["SHIV_ROOT"] = root  # what shiv's bootstrap reads
    import json
    import zipfile

    with zipfile.ZipFile(sys.argv[0]) as archive:
        build_id = json.loads(archive.read("environment.json").decode("utf-8"))["build_id"]
    # shiv's own naming: <root>/<resolved pyz file name>_<build id>
    ours = os.path.join(
        os.path.expanduser(root), os.path.basename(os.path.realpath(sys.argv[0])) + "_" + build_id
    )
    try:
        hold(ours)
        prune(os.path.expanduser(root), ours)
    except OSError:
        pass  # marking and pruning are housekeeping: never a reason not to start
    if not os.path.isdir(os.path.join(ours, "site-packages")):
        sys.stderr.write(
            "%s: first run of this build: unpacking to %s (takes a few seconds, once)\n" % (NAME, ours)
        )
    # For the .pth hook (platform directories) and `robot-md-mcp --version`.
    sys.robot_md_mcp_pyz = {"platform": key, "dirs": platform_dirs(key, this["version"])}
    import _bootstrap

    _bootstrap.extract_site_packages = extract_site_packages
    _bootstrap.bootstrap()


if __name__ == "__main__":
    main()
