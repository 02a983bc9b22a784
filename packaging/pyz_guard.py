# -*- coding: utf-8 -*-
# The robot-md-mcp pyz's entry: the zip's __main__.py, written into the zip by build_pyz.py (shiv only
# zips the site-packages tree; nothing of shiv runs). It parses on CPython 2.7 and 3.x (no f-strings,
# annotations, keyword-only arguments, `raise ... from`), so that an interpreter the pyz cannot serve
# gets ONE clear line instead of a SyntaxError or an opaque ImportError. In order:
#   1. check the interpreter and platform (check()); if this file cannot serve them: one line, exit 1;
#   2. choose the unpack root: SHIV_ROOT, else ~/.shiv, else $XDG_CACHE_HOME/shiv, else
#      <temp>/shiv-<uid> - a real folder (no symbolic link anyone but root or us controls) that only this
#      user can change (safe_dir());
#   3. prune other builds' unpacked copies that went unused for a month (by age);
#   4. first run: unpack the members this interpreter runs (the shared tree and its platform
#      directories, not every platform's) into <copy>.tmp-<pid>, then one rename - one run at a time,
#      a bounded wait for another's; refuse a copy someone else made;
#   5. put the platform directories (most specific first), then the shared tree, on sys.path, record
#      sys.robot_md_mcp_pyz, and exit with robot_md_mcp.main()'s code.
import os
import sys

NAME = "robot-md-mcp"
# The CPythons the pyz files serve, 3.10 to 3.15: the one place the range is named (build_pyz.py builds
# a target for each).
SUPPORTED = (10, 15)
# {platform key: {"pythons": ["3.10", ...], "glibc": [2, 17] or "macos": [11, 0]}}, filled in per build.
TARGETS = {}  # build_pyz.py fills this in
# A digest of everything this file unpacks (and of this file): names the unpacked copy.
BUILD_ID = "0" * 16  # build_pyz.py fills this in
# Beside this file in the zip: {"only": {member: [the targets that use it]}} for the members not every
# target uses (read on a first run only).
INDEX = "robot-md-mcp-pyz.json"
SYSTEMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}
# Aliases for platform.machine() spellings of the same CPU.
MACHINES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "aarch64": "aarch64"}


# --- 1. can this file serve this interpreter? ----------------------------------------------------


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


def _system_problem(target, libc, os_release):
    """Why this system cannot load the target's binaries (C library, macOS version), or None."""
    if "glibc" in target:
        if libc[0] != "glibc":
            return "needs glibc: on musl (Alpine) use a glibc system or `pipx install %s`" % NAME
        if (_version_tuple(libc[1]) or (0, 0)) < tuple(target["glibc"]):
            return "needs glibc %d.%d+, this system has %s; try `pipx install %s`" % (
                tuple(target["glibc"]) + (libc[1], NAME)
            )
    if "macos" in target:
        release = _version_tuple(os_release or "0.0") or (0, 0)
        if release == (10, 16):  # what macOS 11+ reports to programs built with an old SDK
            release = (11, 0)
        if release < tuple(target["macos"]):
            return "needs macOS %d.%d+; try `pipx install %s`" % (tuple(target["macos"]) + (NAME,))
    return None


def is_slim(targets):
    """A slim pyz serves one platform and one CPython."""
    return len(targets) == 1 and len(next(iter(targets.values()))["pythons"]) == 1


def _python_command(version, sys_platform):
    return ("py -" if sys_platform == "win32" else "python") + version


def _on_path(pythons, path):
    """`python3.X` for the newest of pythons found on the PATH string path, or None."""
    for version in sorted(pythons, key=_version_tuple, reverse=True):
        for folder in (path or "").split(os.pathsep):
            candidate = os.path.join(folder, "python" + version)
            if folder and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return "python" + version
    return None


def _advice(key, target, sys_platform, machine, pointer_bits, version, targets, path):
    """What to do instead, when this file cannot serve the interpreter (the system itself is fine)."""
    if target and is_slim(targets):  # the right system, the wrong interpreter
        return "run it with %s, or download %s.pyz (the universal file)" % (
            _python_command(target["pythons"][0], sys_platform),
            NAME,
        )
    if target and sys_platform != "win32":
        found = _on_path(target["pythons"], path)
        if found:
            return "run it with %s (it is on your PATH)" % found
    if key and not target:  # a platform the universal file serves, not this slim one
        return "download %s.pyz (the universal file), or the slim file for CPython %d.%d on %s" % (
            (NAME,) + tuple(version[:2]) + (key,)
        )
    return _install_hint(sys_platform, machine, pointer_bits)


def span(pythons):
    """'3.10-3.15' for a sorted list of CPython versions, '3.12' for one."""
    return pythons[0] if len(pythons) == 1 else pythons[0] + "-" + pythons[-1]


def _install_hint(sys_platform, machine, pointer_bits):
    """What to install where no interpreter here will do, fitting the machine."""
    newest = "3.%d" % SUPPORTED[1]
    if sys_platform == "win32":
        return "install 64-bit Python %s from python.org or the Microsoft Store" % newest
    if sys_platform == "darwin":
        return "install Python %s from python.org or `brew install python`" % newest
    if pointer_bits != 64 and (machine or "").lower().startswith("armv6"):
        return "this CPU runs only 32-bit systems, which no pyz serves: try `pipx install %s`" % NAME
    if pointer_bits != 64:  # e.g. 32-bit Raspberry Pi OS on a 64-bit Pi: the system is the fix
        return "this is a 32-bit system: install the 64-bit one (on a Raspberry Pi: Raspberry Pi OS 64-bit)"
    if sys_platform.startswith("linux"):
        versions = ["3.%d" % SUPPORTED[0], newest]
        return "install python3 (%s) from your distribution, or `uv python install %s`" % (
            span(versions),
            newest,
        )
    return "`pipx install %s` may work where Python and a C compiler exist" % NAME


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
    path=None,
):
    """(key, None) if this pyz can serve the interpreter described, else (None, one line saying what
    to do). libc is platform.libc_ver() on Linux (('', '') on musl); os_release is the macOS version;
    path is the PATH to look for a CPython this file can serve (default: the real one)."""
    targets = TARGETS if targets is None else targets
    path = os.environ.get("PATH", "") if path is None else path
    key = platform_key(sys_platform, machine, pointer_bits)
    target = targets.get(key) if key else None
    problem = _system_problem(target, libc, os_release) if target else None
    want = "%d.%d" % tuple(version[:2])
    if target and not problem and implementation == "cpython" and want in target["pythons"]:
        if not free_threaded:
            return key, None
    flavour = implementation if implementation == "cpython" else implementation + " (not CPython)"
    if free_threaded:
        flavour += " free-threaded"
    return None, "%s: %s %s; this is %s %s %s on %s %s - %s" % (
        NAME,
        "this file is for" if is_slim(targets) else "needs",
        supported(targets),
        sys.executable or "python",
        flavour,
        ".".join(map(str, version[:3])),
        sys_platform,
        machine or "?",
        problem or _advice(key, target, sys_platform, machine, pointer_bits, version, targets, path),
    )


def supported(targets):
    """`64-bit CPython 3.10-3.14 on Linux (x86_64, aarch64; glibc 2.17+), macOS (...) or Windows (amd64)`."""
    pythons = sorted(set(p for t in targets.values() for p in t["pythons"]), key=_version_tuple)
    places = []
    for system in ("linux", "darwin", "win32"):
        keys = sorted(k for k in targets if k.startswith(system + "-"))
        if keys:
            extra = ["glibc %d.%d+" % tuple(targets[k]["glibc"]) for k in keys[:1] if "glibc" in targets[k]]
            places.append(
                "%s (%s)"
                % (SYSTEMS[system], "; ".join([", ".join(k.split("-", 1)[1] for k in keys)] + extra))
            )
    return "64-bit CPython %s on %s" % (span(pythons), " or ".join(places))


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
    """The platform directories (relative to site-packages, most specific first) for a target; those
    that exist go ahead of the shared tree on sys.path."""
    py = "cp%d%d" % tuple(version[:2])
    return ["_platform/%s-%s" % (key, py), "_platform/" + key, "_platform/" + py]


def target_name(key, version):
    """linux-x86_64-cp312: a platform key and a CPython, as the build names its targets."""
    return "%s-cp%d%d" % (key, version[0], version[1])


def copy_name(build_id, key, version):
    """The unpacked copy's folder name: one per build, platform and CPython (another CPython on the
    same machine gets its own copy, with its own platform directories)."""
    return "%s_%s_%s" % (NAME, build_id, target_name(key, version))


def wanted(member, dirs, target="", only=None):
    """True for a zip member the interpreter of target (e.g. linux-x86_64-cp312) runs: of the
    platform directories only dirs, and of the shared tree what the index only (INDEX) does not
    reserve for other targets. Other platforms' compiled files are most of the universal pyz."""
    parts = member.split("/")
    if parts[0] != "site-packages" or len(parts) < 2 or member.endswith("/"):
        return False
    if only and member in only:
        return target in only[member]
    return parts[1] != "_platform" or (len(parts) > 3 and "_platform/" + parts[2] in dirs)


# --- 2. where to unpack: a folder no other user can change ---------------------------------------
# Another local user must not be able to put code where we import it from. So every folder the pyz
# unpacks into or imports from is reached by walking its path from / with lstat (never following a
# link blindly): each folder on the way is owned by root or us and writable by no one else unless it
# is sticky (/tmp: then others cannot rename what we own in it); a symbolic link is followed only if
# root or we own it (macOS's /tmp and /var, Fedora Atomic's /home, a SHIV_ROOT link of our own: only
# its owner can have made it, and the folder holding it is checked like any other); the folder itself
# is owned by us and writable by no one else. What goes on sys.path is the real path that was
# checked, so retargeting a link afterwards changes nothing.


def _parts(path):
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]


def _trusted_dir(path, st, uid):
    """Why a folder on the way cannot be trusted, or None."""
    import stat

    if st.st_uid not in (0, uid):
        return "%s belongs to another user (uid %d)" % (path, st.st_uid)
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return "%s can be changed by other users (mode %o)" % (path, stat.S_IMODE(st.st_mode))
    return None


def _lstat_or_make(path):
    """os.lstat(path), making path (0700) first if it does not exist."""
    import errno

    try:
        return os.lstat(path)
    except OSError as error:
        if error.errno != errno.ENOENT:
            raise
    try:
        os.mkdir(path, 0o700)
    except OSError as error:
        if error.errno != errno.EEXIST:  # lost a race: look at what is there now
            raise
    return os.lstat(path)


def safe_dir(path, uid):
    """(real path, None) if path is (or can be made) a folder that only uid and root can change,
    else (None, why). uid None (Windows): only made and checked to be a folder."""
    import stat

    if uid is None:
        try:
            if not os.path.isdir(path):
                os.makedirs(path)
            return os.path.abspath(path), None
        except OSError as error:
            return None, "cannot make %s: %s" % (path, error.strerror)
    real, todo, links = "/", _parts(os.path.abspath(path)), 0
    while todo:
        name = todo.pop(0)
        if name == "..":
            real = os.path.dirname(real)
            continue
        here = os.path.join(real, name)
        try:
            problem = _trusted_dir(real, os.lstat(real), uid)
            st = None if problem else _lstat_or_make(here)
        except OSError as error:
            return None, "cannot make %s: %s" % (here, error.strerror)
        if problem:
            return None, problem
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if st.st_uid not in (0, uid) or links > 40:  # only its owner (or root) can change a link
                return None, "%s is a symbolic link another user (uid %d) made" % (here, st.st_uid)
            target = os.readlink(here)
            real = "/" if target.startswith("/") else real
            todo = _parts(target) + todo
        elif not stat.S_ISDIR(st.st_mode):
            return None, "%s is not a folder" % here
        else:
            real = here
    return _own_dir(real, uid)


def _own_dir(real, uid):
    import stat

    try:
        st = os.lstat(real)
    except OSError as error:
        return None, "cannot use %s: %s" % (real, error.strerror)
    if st.st_uid != uid:
        return None, "%s belongs to another user (uid %d)" % (real, st.st_uid)
    if st.st_mode & 0o022:
        return None, "%s can be changed by other users (mode %o; `chmod go-w` it)" % (
            real,
            stat.S_IMODE(st.st_mode),
        )
    return real, None


def home_dir(environ):
    """HOME, else the passwd entry's home, else None (a uid with no passwd entry, HOME unset)."""
    if environ.get("HOME"):
        return environ["HOME"]
    if sys.platform == "win32":
        return os.path.expanduser("~")
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir or None
    except (ImportError, KeyError):
        return None


def root_candidates(environ, home, uid):
    """Where to unpack, in order: SHIV_ROOT alone if set; else ~/.shiv (shiv's default),
    $XDG_CACHE_HOME/shiv, <temp>/shiv-<uid> - so a read-only or missing home still works."""
    if environ.get("SHIV_ROOT"):
        return [os.path.expanduser(environ["SHIV_ROOT"])]
    import tempfile

    user = str(uid) if uid is not None else environ.get("USERNAME", "user")
    candidates = [os.path.join(home, ".shiv")] if home else []
    if environ.get("XDG_CACHE_HOME"):
        candidates.append(os.path.join(environ["XDG_CACHE_HOME"], "shiv"))
    return candidates + [os.path.join(tempfile.gettempdir(), "shiv-" + user)]


def unpack_root(environ, uid, home=None):
    """(real root, skipped) with the reasons the candidates before it were passed over, or
    (None, one line) if none will do."""
    home = home_dir(environ) if home is None else home
    skipped = []
    for candidate in root_candidates(environ, home, uid):
        real, problem = safe_dir(candidate, uid)
        if real:
            return real, skipped
        skipped.append(problem)
    if environ.get("SHIV_ROOT"):
        return None, "%s: cannot unpack into SHIV_ROOT: %s" % (NAME, skipped[0])
    return None, "%s: no safe folder to unpack into (%s); set SHIV_ROOT to a folder only you can write" % (
        NAME,
        "; ".join(skipped),
    )


def copy_state(copy, uid):
    """("absent"|"ready", None), or (None, why the existing copy is refused). Its name is
    predictable: one that someone else made, or that others can change, is never imported from."""
    import stat

    for path in (copy, os.path.join(copy, "site-packages")):
        try:
            st = os.lstat(path)
        except OSError:
            if path == copy:
                return "absent", None
            return None, "%s: %s is incomplete (no site-packages): remove it" % (NAME, copy)
        if not stat.S_ISDIR(st.st_mode):
            return None, "%s: refusing %s: not a folder (a link?): remove it" % (NAME, path)
        if uid is not None and st.st_uid != uid:
            return None, "%s: refusing %s: another user (uid %d) made it: remove it" % (NAME, path, st.st_uid)
        if uid is not None and st.st_mode & 0o022:
            why = "others can change it (mode %o)" % stat.S_IMODE(st.st_mode)
            return None, "%s: refusing %s: %s: remove it" % (NAME, path, why)
    return "ready", None


# --- 3. pruning other builds' unpacked copies, by age -------------------------------------------
# Every run touches its own copy. A copy of ours that no run has touched for MAX_IDLE, a half-made one
# (<copy>.tmp-<pid>, left by a run killed while unpacking) older than MAX_UNPACK, and a lock file idle
# for MAX_IDLE are removed; a copy is renamed first, so a run of that build starting meanwhile unpacks
# anew. Other programs' folders are never touched.
MAX_IDLE = 30 * 86400
MAX_UNPACK = 3600
OURS = r"^%s_[0-9a-f]{16}_[a-z0-9_]+-[a-z0-9_]+-cp\d+(\.tmp-\d+|\.pruning-\d+|\.lock)?$" % NAME
# Never through a link; on Windows, bytes as written (a text-mode descriptor would turn \n into \r\n).
OPEN_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


def stale(name, idle):
    """Whether root/name, one of our folders or files idle for `idle` seconds, should go."""
    import re

    found = re.match(OURS, name)
    if not found:
        return False
    suffix = (found.group(1) or "").split("-")[0]
    return suffix == ".pruning" or idle >= (MAX_UNPACK if suffix == ".tmp" else MAX_IDLE)


def prune(root, ours, now=None):
    """Remove our stale copies under root but `ours` (the rule above); best effort. Returns their names."""
    import shutil
    import time

    now = time.time() if now is None else now
    removed = []
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return removed
    for name in names:
        path = os.path.join(root, name)
        try:
            if path == ours or not stale(name, now - os.lstat(path).st_mtime):
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                doomed = (
                    path if ".pruning-" in name else "%s.pruning-%d" % (path.split(".tmp-")[0], os.getpid())
                )
                os.rename(path, doomed)  # atomic: a new run of that build now unpacks anew
                shutil.rmtree(doomed, ignore_errors=True)
            else:
                os.remove(path)
            removed.append(name)
        except OSError:
            continue
    return removed


# --- 4. unpacking: one run at a time, into <copy>.tmp-<pid>, then one rename -----------------------
# Sequential: threads saved under WAIT_FOR_THREADS of the emulated Pi's first run (docs/performance.md).
# A run that finds another unpacking waits for it at most WAIT_LIMIT, saying so, then unpacks on its
# own: a run stopped midway (Ctrl-Z, a frozen client) never blocks later ones for long.
WAIT_LIMIT = 60


class _Lock(object):
    """An exclusive lock on a file (flock, or msvcrt on Windows), waited for at most `limit` seconds."""

    def __init__(self, path):
        self.path = path
        self.fd = None

    def acquire(self, limit, copy):
        """True once held; False (after one line saying so) when another run held it all along."""
        import time

        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | OPEN_FLAGS, 0o600)
        deadline = time.time() + limit
        if not self._try():
            sys.stderr.write(
                "%s: waiting for another run unpacking to %s (at most %d s)\n" % (NAME, copy, limit)
            )
        while not self._try():
            if time.time() >= deadline:
                sys.stderr.write("%s: gave up waiting after %d s; unpacking here too\n" % (NAME, limit))
                self.release()
                return False
            time.sleep(0.1)
        return True

    def _try(self):
        try:
            fcntl = _fcntl()
            if fcntl is not None:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:
                import msvcrt

                msvcrt.locking(self.fd, msvcrt.LK_NBLCK, 1)
            return True
        except (IOError, OSError):
            return False

    def release(self):
        if self.fd is not None:
            os.close(self.fd)  # releases flock and msvcrt locks alike
            self.fd = None


def _fcntl():
    try:
        import fcntl

        return fcntl
    except ImportError:  # Windows
        return None


def _member_path(root, name):
    """Where a zip member goes; only names inside root (our own zips never have others)."""
    parts = name.rstrip("/").split("/")
    if name.startswith("/") or "\\" in name or ".." in parts or ":" in parts[0]:
        raise ValueError("refusing %r: it names a place outside the unpack folder" % name)
    return os.path.join(root, *parts)


def _write_member(archive, root, info):
    path = _member_path(root, info.filename)
    data = archive.read(info)
    folder = os.path.dirname(path)
    if not os.path.isdir(folder):
        os.makedirs(folder, 0o755)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_FLAGS, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.chmod(path, (info.external_attr >> 16) & 0o755 or 0o644)  # the modes the build recorded


def unpack(pyz, copy, dirs, target, wait_limit=WAIT_LIMIT):
    """Unpack the members of pyz that target (with platform directories dirs) runs as copy: into
    copy.tmp-<pid>, then one rename. False if another run unpacked it meanwhile. A failure (a full
    disk, a damaged file) is one line and exit 1, Ctrl-C exit 130, each leaving no .tmp behind."""
    import shutil
    import zipfile

    lock = _Lock(copy + ".lock")
    tmp = "%s.tmp-%d" % (copy, os.getpid())
    try:
        lock.acquire(wait_limit, copy)
        if os.path.lexists(copy):
            return False  # another run unpacked it while we waited
        os.mkdir(tmp, 0o700)  # stays 0700: only this user reads it
        with zipfile.ZipFile(pyz) as archive:
            for info in _members(archive, dirs, target):
                _write_member(archive, tmp, info)
        return _rename(tmp, copy)
    except KeyboardInterrupt:  # Ctrl-C while unpacking: quietly, as the server itself does
        shutil.rmtree(tmp, ignore_errors=True)
        raise SystemExit(130)  # noqa: B904
    except Exception as error:
        shutil.rmtree(tmp, ignore_errors=True)
        # one line, no traceback (and no `raise ... from`: this file parses on CPython 2.7)
        raise SystemExit("%s: could not unpack to %s: %s" % (NAME, copy, _why(error, pyz)))  # noqa: B904
    finally:
        lock.release()


def _rename(source, destination):
    """os.rename (retried for a second on Windows, where a virus scanner may hold a new file); False
    if another run's copy got there first (one that gave up waiting for us, or we for it)."""
    import shutil
    import time

    for attempt in range(10):
        try:
            os.rename(source, destination)
            return True
        except OSError:
            if os.path.isdir(destination):
                shutil.rmtree(source, ignore_errors=True)
                return False
            if sys.platform != "win32" or attempt == 9:
                raise
            time.sleep(0.1)


def _members(archive, dirs, target):
    import json

    names = set(archive.namelist())
    only = json.loads(archive.read(INDEX).decode("utf-8"))["only"] if INDEX in names else {}
    return [i for i in archive.infolist() if wanted(i.filename, dirs, target, only)]


def _why(error, pyz):
    """The one line's reason: the system's word for a file error; a damaged zip (bad CRC, bad deflate
    data, cut short) is named as such."""
    if isinstance(error, (OSError, ValueError)) and not type(error).__name__.startswith("BadZip"):
        return error.strerror if isinstance(error, OSError) and error.strerror else str(error)
    return "%s is damaged or incomplete (%s): download it again" % (pyz, error)


# --- 5. sys.path, and handing over -----------------------------------------------------------------


def activate(site_dir, dirs):
    """Put the platform directories of dirs that exist (most specific first), then the shared tree,
    on sys.path ahead of the interpreter's own site-packages, running their .pth files (pywin32's) as
    site.addsitedir does. Returns the platform directories used."""
    import site

    used = [d for d in dirs if os.path.isdir(os.path.join(site_dir, *d.split("/")))]
    length = len(sys.path)
    index = length
    for i, entry in enumerate(sys.path):
        if os.path.basename(entry.rstrip("/\\")) in ("site-packages", "dist-packages"):
            index = i
            break
    for folder in [os.path.join(site_dir, *d.split("/")) for d in used] + [site_dir]:
        site.addsitedir(folder)
    sys.path[:] = sys.path[:index] + sys.path[length:] + sys.path[index:length]
    return used


def entry_point(environ):
    """robot_md_mcp.main, or what SHIV_ENTRY_POINT (module:function) names - as a shiv pyz allows;
    the benchmark runs its floor server through the same pyz that way. Child processes do not
    inherit the override."""
    import importlib

    spec = environ.pop("SHIV_ENTRY_POINT", None) or "robot_md_mcp:main"
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function or "main")


def _prepare(this, key):
    """Steps 2-4: the real path of our unpacked site-packages (unpacked now if needed)."""
    uid = os.geteuid() if hasattr(os, "geteuid") else None
    root, skipped = unpack_root(os.environ, uid)
    if root is None:
        raise SystemExit(skipped)  # here the one line saying why
    copy = os.path.join(root, copy_name(BUILD_ID, key, this["version"]))
    pyz = os.path.abspath(sys.argv[0])
    prune(root, copy)
    state, problem = copy_state(copy, uid)
    if state == "absent":
        notice = "%s: first run of this build: unpacking to %s (takes a few seconds, once)" % (NAME, copy)
        passed = " (passed over: %s)" % "; ".join(skipped) if skipped else ""
        sys.stderr.write(notice + passed + "\n")
        unpack(pyz, copy, platform_dirs(key, this["version"]), target_name(key, this["version"]))
        state, problem = copy_state(copy, uid)
    if problem:
        raise SystemExit(problem)
    try:
        os.utime(copy, None)  # in use: pruning goes by this
    except OSError:
        pass
    return os.path.join(copy, "site-packages")


def main():
    try:
        this = describe_this_interpreter()
        key, problem = check(**this)
        if problem:
            raise SystemExit(problem)
        site_dir = _prepare(this, key)
        dirs = platform_dirs(key, this["version"])
        used = activate(site_dir, dirs)
        # `robot-md-mcp --version` names the platform; sys.argv[0] stays the pyz (launch_command()).
        sys.robot_md_mcp_pyz = {"platform": key, "dirs": dirs, "used": used, "site": site_dir}
        run = entry_point(os.environ)
    except KeyboardInterrupt:
        raise SystemExit(130)  # noqa: B904
    sys.exit(run())


if __name__ == "__main__":
    main()
