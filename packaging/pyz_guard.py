# The robot-md-mcp pyz's entry: the zip's __main__.py (build_pyz.py writes it in; no shiv code runs).
# It parses on CPython 2.7 and 3.x, so an interpreter the pyz cannot serve gets ONE clear line; types
# are comments for that reason. Steps (docs/packaging.md): 1. check the interpreter; 2. choose a safe
# unpack root; 3. prune other builds' idle copies; 4. first run: unpack; 5. sys.path, then main().
import errno
import importlib
import json
import os
import platform
import re
import shutil
import site
import stat
import struct
import sys
import time

MYPY = False
if MYPY:  # for mypy only: CPython 2.7 has no typing module
    from typing import Any, Callable, Dict, List, Mapping, MutableMapping, Optional, Tuple  # noqa: F401

    Target = Dict[str, Any]  # {"pythons": ["3.10", ...], "glibc": [2, 17] or "macos": [11, 0]}
    Verdict = Tuple[Optional[str], Optional[str]]  # (a value, None) or (None, why not)

NAME = "robot-md-mcp"
SUPPORTED = (10, 15)  # threat: none (usability). CPython 3.10-3.15: the one place the range is named
TARGETS = {}  # type: Dict[str, Target]  # build_pyz.py fills this in
BUILD_ID = "0" * 16  # build_pyz.py fills this in
INDEX = "robot-md-mcp-pyz.json"  # {"only": {member: [the targets that use it]}}, if not every target
SYSTEMS = {"linux": "Linux", "darwin": "macOS", "win32": "Windows"}
MACHINES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}  # spellings of the same CPU
SPELLED = {"linux": {"x86_64": "x86_64", "aarch64": "aarch64"}, "win32": {"x86_64": "amd64"}}
SPELLED["darwin"] = {"x86_64": "x86_64", "aarch64": "arm64"}
# threat: none (housekeeping of our own disk)
MAX_IDLE = 30 * 86400  # seconds: step 3 (pruning) says why
MAX_UNPACK = 3600
OURS = r"^%s_[0-9a-f]{16}_[a-z0-9_]+-[a-z0-9_]+-cp\d+(\.tmp-\d+|\.pruning-\d+)?$" % NAME
# threat: T-PYZ-1 (threat-model note 2)
OPEN_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)  # no link; Windows: bytes as is


# --- 1. can this file serve this interpreter? ----------------------------------------------------
def platform_key(sys_platform, machine, pointer_bits):  # type: (str, str, int) -> Optional[str]
    """linux-aarch64, darwin-arm64, win32-amd64 (as the pyz names its platforms), or None."""
    if pointer_bits != 64:
        return None
    if sys_platform.startswith("linux"):  # CPython 2.7 says linux2
        sys_platform = "linux"
    name = SPELLED.get(sys_platform, {}).get(MACHINES.get(machine.lower(), machine.lower()))
    return None if name is None else sys_platform + "-" + name


def _version_tuple(text):  # type: (str) -> Tuple[int, ...]
    """(3, 12) for "3.12.1"; (0, 0) for what is not a version."""
    parts = text.split(".")[:2]
    return tuple(int(p) for p in parts) if len(parts) == 2 and all(p.isdigit() for p in parts) else (0, 0)


def _system_problem(target, libc, os_release):  # type: (Target, Tuple[str, str], str) -> Optional[str]
    """Why this system cannot load the target's binaries (C library, macOS version), or None."""
    if "glibc" in target:
        if libc[0] != "glibc":
            return "needs glibc: on musl (Alpine) use a glibc system or `pipx install %s`" % NAME
        if _version_tuple(libc[1]) < tuple(target["glibc"]):
            need = tuple(target["glibc"]) + (libc[1], NAME)
            return "needs glibc %d.%d+, this system has %s; try `pipx install %s`" % need
    if "macos" in target:
        release = _version_tuple(os_release)
        release = (11, 0) if release == (10, 16) else release  # macOS 11+ as an old SDK's programs see it
        if release < tuple(target["macos"]):
            return "needs macOS %d.%d+; try `pipx install %s`" % (tuple(target["macos"]) + (NAME,))
    return None


def is_slim(targets):  # type: (Dict[str, Target]) -> bool  # one platform, one CPython
    return len(targets) == 1 and len(next(iter(targets.values()))["pythons"]) == 1


def span(pythons):  # type: (List[str]) -> str
    """'3.10-3.15' for a sorted list of CPython versions, '3.12' for one."""
    return pythons[0] if len(pythons) == 1 else pythons[0] + "-" + pythons[-1]


def _advice(this, key, target, targets, path):
    # type: (Dict[str, Any], Optional[str], Optional[Target], Dict[str, Target], str) -> str
    """What to do instead, when this file cannot serve the interpreter (the system itself is fine)."""
    system = this["sys_platform"]
    if target and is_slim(targets):  # the right system, the wrong interpreter
        command = ("py -" if system == "win32" else "python") + target["pythons"][0]
        return "run it with %s, or download %s.pyz (the universal file)" % (command, NAME)
    on_path = _python_on_path(target["pythons"] if target else [], path if system != "win32" else "")
    if on_path:
        return "run it with python%s (it is on your PATH)" % on_path
    if key and not target:  # a platform the universal file serves, not this slim one
        where = (NAME,) + tuple(this["version"][:2]) + (key,)
        return "download %s.pyz (the universal file), or the slim file for CPython %d.%d on %s" % where
    return install_advice(system, this["machine"], this["pointer_bits"])


def _python_on_path(pythons, path):  # type: (List[str], str) -> Optional[str]
    """The newest of pythons (["3.11", ...]) found as an executable pythonX.Y on path, or None."""
    for version in sorted(pythons, key=_version_tuple, reverse=True):
        for folder in path.split(os.pathsep):
            candidate = os.path.join(folder, "python" + version)
            if folder and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return version
    return None


def install_advice(system, machine, bits):  # type: (str, Optional[str], int) -> str
    """How to get an interpreter a pyz serves on this system (or why none will)."""
    newest, machine = "3.%d" % SUPPORTED[1], (machine or "").lower()
    if system == "win32":
        return "install 64-bit Python %s from python.org or the Microsoft Store" % newest
    if system == "darwin":
        return "install Python %s from python.org or `brew install python`" % newest
    if bits != 64 and machine.startswith("armv6"):
        return "this CPU runs only 32-bit systems, which no pyz serves: try `pipx install %s`" % NAME
    if bits != 64:  # e.g. 32-bit Raspberry Pi OS on a 64-bit Pi: the system is the fix
        return "this is a 32-bit system: install the 64-bit one (on a Raspberry Pi: Raspberry Pi OS 64-bit)"
    if system.startswith("linux"):
        versions = span(["3.%d" % SUPPORTED[0], newest])
        return "install python3 (%s) from your distribution, or `uv python install %s`" % (versions, newest)
    return "`pipx install %s` may work where Python and a C compiler exist" % NAME


def check(this, targets=None, path=None):
    # type: (Dict[str, Any], Optional[Dict[str, Target]], Optional[str]) -> Verdict
    """(key, None) if this pyz serves the interpreter `this` describes, else (None, one line saying
    what to do); path: where to look for a CPython that will."""
    targets = TARGETS if targets is None else targets
    path = os.environ.get("PATH", "") if path is None else path
    key = platform_key(this["sys_platform"], this["machine"], this["pointer_bits"])
    target = targets.get(key) if key else None
    problem = _system_problem(target, this["libc"], this["os_release"]) if target else None
    implementation, version, gil = this["implementation"], this["version"], not this["free_threaded"]
    served = target and not problem and "%d.%d" % version[:2] in target["pythons"]
    if served and implementation == "cpython" and gil:
        return key, None
    why = problem or _advice(this, key, target, targets, path)
    needs = "this file is for" if is_slim(targets) else "needs"
    return None, "%s: %s %s; this is %s - %s" % (NAME, needs, supported(targets), describe(this), why)


def describe(this):  # type: (Dict[str, Any]) -> str
    """`/usr/bin/python3 cpython 3.12.1 on linux x86_64` (`pypy (not CPython)`, `... free-threaded`)."""
    implementation = this["implementation"]
    flavour = implementation if implementation == "cpython" else implementation + " (not CPython)"
    flavour += "" if not this["free_threaded"] else " free-threaded"
    release = ".".join(map(str, this["version"][:3]))
    what = (sys.executable or "python", flavour, release, this["sys_platform"], this["machine"] or "?")
    return "%s %s %s on %s %s" % what


def buildable_here(this):  # type: (Dict[str, Any]) -> Verdict
    """(linux-x86_64-cp312, None) if a slim pyz serves `this` (`./build.sh pyz --here`), else (None, why)."""
    key = platform_key(this["sys_platform"], this["machine"], this["pointer_bits"])
    version = tuple(this["version"])
    if key is None and this["pointer_bits"] != 64:
        why = install_advice(this["sys_platform"], this["machine"], this["pointer_bits"])
    elif key is None:
        why = "no pyz serves this platform: try `pipx install %s`" % NAME
    elif key.startswith("linux-") and this["libc"][0] != "glibc":
        why = "no pyz serves musl (Alpine): use a glibc system, or `pipx install %s`" % NAME
    elif this["implementation"] != "cpython" or this["free_threaded"]:
        why = "a pyz serves CPython with the GIL only: run the build with one (PYTHON=python3.X)"
    elif not SUPPORTED[0] <= version[1] <= SUPPORTED[1] or version[0] != 3:
        served = span(["3.%d" % SUPPORTED[0], "3.%d" % SUPPORTED[1]])
        why = "a pyz serves CPython %s only: run the build with one (PYTHON=python3.X)" % served
    else:
        return target_name(key, version), None
    return None, "%s: cannot build a pyz for %s - %s" % (NAME, describe(this), why)


def supported(targets):  # type: (Dict[str, Target]) -> str
    """`64-bit CPython 3.10-3.15 on Linux (x86_64, aarch64; glibc 2.17+), macOS (...) or Windows (amd64)`."""
    pythons = sorted(set(p for t in targets.values() for p in t["pythons"]), key=_version_tuple)
    places = []
    for system in ("linux", "darwin", "win32"):
        keys = sorted(k for k in targets if k.startswith(system + "-"))
        if keys:
            extra = ["glibc %d.%d+" % tuple(targets[k]["glibc"]) for k in keys[:1] if "glibc" in targets[k]]
            machines = ", ".join(k.split("-", 1)[1] for k in keys)
            places.append("%s (%s)" % (SYSTEMS[system], "; ".join([machines] + extra)))
    return "64-bit CPython %s on %s" % (span(pythons), " or ".join(places))


def describe_this_interpreter():  # type: () -> Dict[str, Any]
    """check()'s arguments for the running interpreter."""
    implementation = getattr(sys, "implementation", None)
    try:
        import sysconfig

        free_threaded = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))
    except Exception:
        free_threaded = False
    name = implementation.name if implementation else platform.python_implementation().lower()
    this = dict(implementation=name, version=tuple(sys.version_info[:3]), sys_platform=sys.platform)
    this.update(
        machine=platform.machine(), pointer_bits=8 * struct.calcsize("P"), free_threaded=free_threaded
    )
    this.update(libc=platform.libc_ver() if sys.platform.startswith("linux") else ("", ""))
    return dict(this, os_release=platform.mac_ver()[0] if sys.platform == "darwin" else "")


def platform_dirs(key, version):  # type: (str, Tuple[int, ...]) -> List[str]
    """The platform directories (relative to site-packages, most specific first) for a target."""
    return ["_platform/" + target_name(key, version), "_platform/" + key, "_platform/cp%d%d" % version[:2]]


def target_name(key, version):  # type: (str, Tuple[int, ...]) -> str
    """linux-x86_64-cp312: a platform key and a CPython, as the build names its targets."""
    return "%s-cp%d%d" % (key, version[0], version[1])


def copy_name(build_id, key, version):  # type: (str, str, Tuple[int, ...]) -> str
    """The unpacked copy's folder name: one per build, platform and CPython."""
    return "%s_%s_%s" % (NAME, build_id, target_name(key, version))


def wanted(member, dirs, target="", only=None):
    # type: (str, List[str], str, Optional[Dict[str, List[str]]]) -> bool
    """True for a zip member target runs: of the platform directories dirs, of the rest what `only` allows."""
    parts = member.split("/")
    if parts[0] != "site-packages" or len(parts) < 2 or member.endswith("/"):
        return False
    if only and member in only:
        return target in only[member]
    return parts[1] != "_platform" or (len(parts) > 3 and "_platform/" + parts[2] in dirs)


# --- 2. where to unpack: a folder no other user can change ---------------------------------------
# Every folder on the way is reached from / with lstat; a link is followed only if root or we own it;
# what goes on sys.path is the real path that was checked (docs/packaging.md says why).
def _parts(path):  # type: (str) -> List[str]
    return [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]


# threat: T-PYZ-1
def _writable_by_others(path, st, owners):  # type: (str, os.stat_result, Tuple[int, ...]) -> Optional[str]
    """Why a folder can be changed by someone other than owners, or None (a sticky folder is fine)."""
    if st.st_uid not in owners:
        return "%s belongs to another user (uid %d)" % (path, st.st_uid)
    if st.st_mode & 0o022 and (len(owners) == 1 or not st.st_mode & stat.S_ISVTX):
        hint = "; `chmod go-w` it" if len(owners) == 1 else ""
        return "%s can be changed by other users (mode %o%s)" % (path, stat.S_IMODE(st.st_mode), hint)
    return None


# threat: T-PYZ-1
def _lstat_or_make(path):  # type: (str) -> os.stat_result
    """os.lstat(path), making path (0700) first if it does not exist."""
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


# threat: T-PYZ-1
def safe_dir(path, uid):  # type: (str, Optional[int]) -> Verdict
    """(real path, None) if path is (or can be made) a folder only uid and root can change, else (None,
    why). uid None (Windows): only made."""
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
            problem = _writable_by_others(real, os.lstat(real), (0, uid))
            if problem:
                return None, problem
            st = _lstat_or_make(here)
        except OSError as error:
            return None, "cannot make %s: %s" % (here, error.strerror)
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if st.st_uid not in (0, uid):  # only its owner (or root) can change a link
                return None, "%s is a symbolic link another user (uid %d) made" % (here, st.st_uid)
            if links > 40:  # as the system's own limit: a loop
                return None, "%s: too many symbolic links on the way (a loop?)" % here
            target = os.readlink(here)
            real = "/" if target.startswith("/") else real
            todo = _parts(target) + todo
        elif not stat.S_ISDIR(st.st_mode):
            return None, "%s is not a folder" % here
        else:
            real = here
    try:
        problem = _writable_by_others(real, os.lstat(real), (uid,))
    except OSError as error:
        return None, "cannot use %s: %s" % (real, error.strerror)
    return (None, problem) if problem else (real, None)


def home_dir(environ):  # type: (Mapping[str, str]) -> Optional[str]
    """HOME, else the passwd entry's home, else None (a uid with no passwd entry, HOME unset)."""
    if environ.get("HOME") or sys.platform == "win32":
        return environ.get("HOME") or os.path.expanduser("~")
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir or None
    except KeyError:
        return None


def root_candidates(environ, home, uid):  # type: (Mapping[str, str], Optional[str], Optional[int]) -> List[str]
    """SHIV_ROOT alone if set; else ~/.shiv, $XDG_CACHE_HOME/shiv, <temp>/shiv-<uid>, in order."""
    if environ.get("SHIV_ROOT"):
        return [os.path.expanduser(environ["SHIV_ROOT"])]
    import tempfile

    user = str(uid) if uid is not None else environ.get("USERNAME", "user")
    found = [os.path.join(home, ".shiv")] if home else []
    found += [os.path.join(environ["XDG_CACHE_HOME"], "shiv")] if environ.get("XDG_CACHE_HOME") else []
    return found + [os.path.join(tempfile.gettempdir(), "shiv-" + user)]


def unpack_root(environ, uid, home=None):
    # type: (Mapping[str, str], Optional[int], Optional[str]) -> Tuple[Optional[str], Any]
    """(real root, the reasons the candidates before it were passed over), or (None, one line)."""
    home = home_dir(environ) if home is None else home
    skipped = []  # type: List[str]
    for candidate in root_candidates(environ, home, uid):
        real, problem = safe_dir(candidate, uid)
        if real:
            return real, skipped
        skipped.append(problem or "")
    if environ.get("SHIV_ROOT"):
        return None, "%s: cannot unpack into SHIV_ROOT: %s" % (NAME, skipped[0])
    advice = "set SHIV_ROOT to a folder only you can write"
    return None, "%s: no safe folder to unpack into (%s); %s" % (NAME, "; ".join(skipped), advice)


# threat: T-PYZ-1
def copy_state(copy, uid):  # type: (str, Optional[int]) -> Verdict
    """("absent"|"ready", None), or (None, why): a predictable name: never one others made or can change."""
    for path in (copy, os.path.join(copy, "site-packages")):
        try:
            st = os.lstat(path)
        except OSError:
            incomplete = "%s: %s is incomplete (no site-packages): remove it" % (NAME, copy)
            return ("absent", None) if path == copy else (None, incomplete)
        why = None if stat.S_ISDIR(st.st_mode) else "not a folder (a link?)"
        if uid is not None and st.st_uid != uid:
            why = why or "another user (uid %d) made it" % st.st_uid
        if uid is not None and st.st_mode & 0o022:
            why = why or "others can change it (mode %o)" % stat.S_IMODE(st.st_mode)
        if why:
            return None, "%s: refusing %s: %s: remove it" % (NAME, path, why)
    return "ready", None


# --- 3. pruning other builds' unpacked copies, by age -------------------------------------------
# Every run touches its own copy. Our copies idle for MAX_IDLE, half-made ones older than MAX_UNPACK
# and half-pruned ones go; a copy is renamed first. Other programs' files stay.
# threat: none (housekeeping: only names matching OURS)
def prune(root, ours, now=None):  # type: (str, str, Optional[float]) -> List[str]
    """Remove our stale copies under root but `ours`; best effort. Returns their names."""
    now = time.time() if now is None else now
    removed = []  # type: List[str]
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return removed
    for name in names:
        found, path = re.match(OURS, name), os.path.join(root, name)
        suffix = (found.group(1) or "").split("-")[0] if found else ""
        idle = {".tmp": MAX_UNPACK, ".pruning": float("-inf")}.get(suffix, MAX_IDLE)  # how long it may idle
        try:
            if not found or path == ours or now - os.lstat(path).st_mtime < idle:
                continue
            if os.path.isdir(path) and not os.path.islink(path):
                base = path.split(".tmp-")[0]
                doomed = path if ".pruning-" in name else "%s.pruning-%d" % (base, os.getpid())
                os.rename(path, doomed)  # atomic: a new run of that build now unpacks anew
                shutil.rmtree(doomed, ignore_errors=True)
            else:
                os.remove(path)
            removed.append(name)
        except OSError:
            continue
    return removed


# --- 4. unpacking: into <copy>.tmp-<pid>, then one rename -------------------------------------------
# Two first runs at once: each unpacks into its own .tmp, the first rename wins, the other uses that.
def _write_member(archive, root, info):  # type: (Any, str, Any) -> None  # a ZipFile, a ZipInfo
    """Write one member under root; its name is not checked (a changed pyz runs its own __main__.py)."""
    path = os.path.join(root, *info.filename.rstrip("/").split("/"))
    data = archive.read(info)
    if not os.path.isdir(os.path.dirname(path)):
        os.makedirs(os.path.dirname(path), 0o755)
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | OPEN_FLAGS, 0o600), "wb") as out:
        out.write(data)
    os.chmod(path, (info.external_attr >> 16) & 0o755 or 0o644)  # the modes the build recorded


def unpack(pyz, copy, dirs, target):  # type: (str, str, List[str], str) -> bool
    """Unpack what target runs into copy.tmp-<pid>, then rename it copy; False if another run's copy won.
    A failure is one line and exit 1, Ctrl-C exit 130, each leaving no .tmp behind."""
    import zipfile

    tmp = "%s.tmp-%d" % (copy, os.getpid())
    try:
        # threat: T-PYZ-1
        os.mkdir(tmp, 0o700)  # stays 0700: only this user reads it
        with zipfile.ZipFile(pyz) as archive:
            names = set(archive.namelist())
            only = json.loads(archive.read(INDEX).decode("utf-8"))["only"] if INDEX in names else {}
            for info in archive.infolist():
                if wanted(info.filename, dirs, target, only):
                    _write_member(archive, tmp, info)
        return _rename(tmp, copy)
    except KeyboardInterrupt:  # Ctrl-C while unpacking: quietly, as the server itself does
        shutil.rmtree(tmp, ignore_errors=True)
        raise SystemExit(130)  # noqa: B904
    except Exception as error:  # one line, no traceback (and no `raise ... from`: 2.7 parses this)
        shutil.rmtree(tmp, ignore_errors=True)
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        if not isinstance(error, (OSError, ValueError)) or type(error).__name__.startswith("BadZip"):
            why = "%s is damaged or incomplete (%s): download it again" % (pyz, error)
        raise SystemExit("%s: could not unpack to %s: %s" % (NAME, copy, why))  # noqa: B904


def _rename(source, destination):  # type: (str, str) -> bool
    """os.rename (retried on Windows, where a virus scanner may hold a file); False if another run won."""
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
    return False


# --- 5. sys.path, and handing over -----------------------------------------------------------------
# threat: T-PYZ-1 (the checked real path goes on sys.path)
def activate(site_dir, dirs):  # type: (str, List[str]) -> List[str]
    """Put the dirs that exist, then the shared tree, ahead of site-packages on sys.path (running .pth
    files); returns the dirs used."""
    used = [d for d in dirs if os.path.isdir(os.path.join(site_dir, *d.split("/")))]
    length = len(sys.path)
    names = [os.path.basename(entry.rstrip("/\\")) for entry in sys.path]
    index = next((i for i, n in enumerate(names) if n in ("site-packages", "dist-packages")), length)
    for folder in [os.path.join(site_dir, *d.split("/")) for d in used] + [site_dir]:
        site.addsitedir(folder)
    sys.path[:] = sys.path[:index] + sys.path[length:] + sys.path[index:length]
    return used


def entry_point(environ):  # type: (MutableMapping[str, str]) -> Callable[[], int]
    """robot_md_mcp.main, or SHIV_ENTRY_POINT's module:function (not inherited by child processes)."""
    spec = environ.pop("SHIV_ENTRY_POINT", None) or "robot_md_mcp:main"
    module, _, function = spec.partition(":")
    return getattr(importlib.import_module(module), function or "main")  # type: ignore[no-any-return]


def main():  # type: () -> None
    """Steps 1-5: check the interpreter, find or unpack our copy, then hand over to robot-md-mcp."""
    try:
        this = describe_this_interpreter()
        key, problem = check(this)
        if problem or key is None:
            raise SystemExit(problem)
        uid = os.geteuid() if hasattr(os, "geteuid") else None
        root, skipped = unpack_root(os.environ, uid)
        if root is None:
            raise SystemExit(skipped)  # here the one line saying why
        copy = os.path.join(root, copy_name(BUILD_ID, key, this["version"]))
        prune(root, copy)
        state, problem = copy_state(copy, uid)
        dirs = platform_dirs(key, this["version"])
        if state == "absent":
            notice = "%s: first run of this build: unpacking to %s (takes a few seconds, once)" % (NAME, copy)
            passed = " (passed over: %s)" % "; ".join(skipped) if skipped else ""
            try:  # best effort: stderr may be None, or take nothing
                sys.stderr.write(notice + passed + "\n")
            except (AttributeError, OSError, ValueError):
                pass
            unpack(os.path.abspath(sys.argv[0]), copy, dirs, target_name(key, this["version"]))
            state, problem = copy_state(copy, uid)
        if problem:
            raise SystemExit(problem)
        try:
            os.utime(copy, None)  # in use: pruning goes by this
        except OSError:
            pass
        site_dir = os.path.join(copy, "site-packages")
        # `robot-md-mcp --version` names the platform; sys.argv[0] stays the pyz (launch_command()).
        found = {"platform": key, "dirs": dirs, "used": activate(site_dir, dirs), "site": site_dir}
        sys.robot_md_mcp_pyz = found  # type: ignore[attr-defined]
        run = entry_point(os.environ)
    except KeyboardInterrupt:
        raise SystemExit(130)  # noqa: B904
    sys.exit(run())


if __name__ == "__main__":
    main()
