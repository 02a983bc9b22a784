"""Build robot-md-mcp's zipapps: the universal pyz and one slim pyz per (platform, CPython) target.
Run by `./build.sh pyz` in a venv holding packaging; docs/packaging.md says what each step does and why."""

# threat: none. Its checks (pins, placeholders, budgets, schemas) are of our own build, run by us: outside
# docs/threat-model.md, whose peers meet only what it makes (T-PYZ-1, T-BUNDLE-1).
from __future__ import annotations

import argparse
import concurrent.futures
import email
import fnmatch
import functools
import hashlib
import itertools
import json
import os
import re
import runpy
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from packaging import tags

HERE = Path(__file__).resolve().parent
GUARD = runpy.run_path(str(HERE / "pyz_guard.py"), run_name="pyz_guard")  # its functions, not its main()
PYTHONS = tuple(f"3.{minor}" for minor in range(GUARD["SUPPORTED"][0], GUARD["SUPPORTED"][1] + 1))
# pip --platform matches tags exactly: every glibc we accept, oldest first (pip ranks by this order).
MANYLINUX = ["manylinux2014_{}"] + [f"manylinux_2_{v}_{{}}" for v in range(17, 29)]
# platform key (as pyz_guard.platform_key names it) -> (wheel platform tags, platform_machine, slim name)
PLATFORMS = {
    "darwin-arm64": (list(tags.mac_platforms((11, 0), "arm64")), "arm64", "macosx_arm64"),
    "darwin-x86_64": (list(tags.mac_platforms((11, 0), "x86_64")), "x86_64", "macosx_x86_64"),
    "linux-aarch64": ([t.format("aarch64") for t in MANYLINUX], "aarch64", "manylinux_aarch64"),
    "linux-x86_64": ([t.format("x86_64") for t in MANYLINUX], "x86_64", "manylinux_x86_64"),
    "win32-amd64": (["win_amd64"], "AMD64", "win_amd64"),
}
SYSTEM = {"linux": ("Linux", "posix"), "darwin": ("Darwin", "posix"), "win32": ("Windows", "nt")}
TARGETS = [(plat, py) for plat in PLATFORMS for py in PYTHONS]
NATIVE = (".so", ".pyd", ".dll", ".dylib")
Target = tuple[str, str]  # (platform key, "3.X")
Wheels = dict[Target, list[Path]]
Targets = dict[str, dict[str, Any]]  # pyz_guard.TARGETS: {platform key: {"pythons": [...], ...}}
# path under site-packages (in the shared tree, or under "_platform/<key>/") -> (wheel, member, Mac CPU)
Layout = dict[str, tuple[Path, str, int | None]]
Tree = dict[Target, dict[str, tuple[str, Path, str, int | None]]]  # target -> path -> (sha256, wheel, ...)

# Never imported when serving: tests, type stubs, bytecode, wheel bookkeeping (SBOMs carry random serials).
DROP_DIRS = {"__pycache__", "tests", "test", "benchmarks"}
DROP_FILES = ("*.pyi", "*.pyc", *(f"*.dist-info/{n}" for n in ("RECORD", "WHEEL", "INSTALLER", "sboms/*")))
# pywin32 is large: keep what mcp.os.win32.utilities imports, and what that needs (docs/packaging.md).
PYWIN32_KEEP = """pywin32.pth pywin32-*.dist-info/* pywin32_system32/pywintypes3*.dll win32/License.txt
win32/_win32sysloader*.pyd win32/win32api*.pyd win32/win32job*.pyd win32/lib/pywin32_bootstrap.py
win32/lib/pywintypes.py win32/lib/win32con.py win32/lib/winerror.py""".split()
# Mach-O CPU types: a universal2 (fat) binary carries both; each Mac needs only its own slice.
MACHO_CPU = {"darwin-arm64": 0x0100000C, "darwin-x86_64": 0x01000007}
FAT_MAGIC = (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf")  # a fat Mach-O header: 32-bit and 64-bit offsets
INDEX = GUARD["INDEX"]
DATE = (1980, 1, 1, 0, 0, 0)  # every member's timestamp: rebuilds are byte-identical
# A file cut short is no zip to Python, which reads it as source: the coding line names the problem.
SHEBANG = b"#!/usr/bin/env python3\n"
SHEBANG += b"# -*- coding: robot-md-mcp.pyz-is-damaged-or-incomplete.download-it-again -*-\n"
# Bytes a pyz may take, in MB (a slim one: 16): a Pi's SD card and a download on a slow link feel it.
BUDGET_MB = {"robot-md-mcp.pyz": 120}
EXAMPLE = HERE.parent / "examples" / "bob.ROBOT.md"
SESSION = HERE.parent / "tests" / "support" / "pyz_session.py"  # standard library only: a stdio session
# python -c RECORD SITE ARGS: robot-md-mcp ARGS from tree SITE, then the SITE files it loaded to $RECORD_TO
RECORD = """
import atexit, os, sys
site = os.path.realpath(sys.argv[1])
def record():
    paths = [os.path.realpath(getattr(m, "__file__", None) or os.sep) for m in list(sys.modules.values())]
    ours = [os.path.relpath(p, site) for p in paths if p.startswith(site + os.sep) and p.endswith(".py")]
    with open(os.environ["RECORD_TO"], "a") as out:
        out.write("".join(p.replace(os.sep, "/") + "\\n" for p in ours))
atexit.register(record)
sys.path.insert(0, site)
sys.argv = ["robot-md-mcp", *sys.argv[2:]]
import robot_md_mcp
sys.exit(robot_md_mcp.main())
"""


# How place() may split the targets: by CPython (cp312), platform (linux-x86_64) or both.
GROUPINGS: dict[str, Callable[[Target], str]] = {
    "python": lambda t: "cp" + t[1].replace(".", ""),
    "platform": lambda t: t[0],
    "target": lambda t: target_name(t),
}


class BuildError(Exception):
    """A build step failed: one line, exit 1."""


def target_name(target: Target) -> str:
    return f"{target[0]}-cp{target[1].replace('.', '')}"


def marker_env(target: Target) -> dict[str, str]:
    plat, py = target
    system, os_name = SYSTEM[plat.split("-")[0]]
    env = {"python_version": py, "python_full_version": py + ".0", "implementation_version": py + ".0"}
    env |= {"implementation_name": "cpython", "platform_python_implementation": "CPython"}
    env |= {"sys_platform": plat.split("-")[0], "platform_system": system, "os_name": os_name}
    env |= {"platform_machine": PLATFORMS[plat][1], "platform_release": "", "platform_version": ""}
    return env | {"extra": ""}


def pins_for(target: Target, constraints: Path = HERE / "constraints.txt") -> dict[str, str]:
    """{canonical name: version} of the constraints that apply to target."""
    pins: dict[str, str] = {}
    for line in constraints.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        req = Requirement(line) if line else None
        if req is None or (req.marker and not req.marker.evaluate(marker_env(target))):
            continue
        (spec,) = req.specifier
        name = canonicalize_name(req.name)
        if spec.operator != "==" or name in pins:
            raise BuildError(f"constraints.txt: {line!r}: need exactly one `==` pin per target")
        pins[name] = spec.version
    return pins


def pip_download(target: Target, dest: Path, requirements: Iterable[str]) -> subprocess.CompletedProcess[str]:
    """`pip download --no-deps` of requirements as wheels for target (pip ranks tags by --platform order)."""
    cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
    cmd += ["--only-binary=:all:", "--implementation=cp", f"--python-version={target[1]}", f"--dest={dest}"]
    cmd += ["--abi", GROUPINGS["python"](target), *(f"--platform={tag}" for tag in PLATFORMS[target[0]][0])]
    return subprocess.run([*cmd, *requirements], capture_output=True, text=True, errors="replace")


def resolve(target: Target, cache: Path) -> list[Path]:
    """The wheels of target's pins, listed under a key of all that shaped pip's choice."""
    inputs = (HERE / "constraints.txt").read_text() + json.dumps(PLATFORMS[target[0]][0])
    key = hashlib.sha256(inputs.encode()).hexdigest()[:16]
    listing = cache / "resolved" / f"{target_name(target)}-{key}.txt"
    wheels = [cache / name for name in listing.read_text().split()] if listing.exists() else []
    if wheels and all(w.exists() for w in wheels):
        return wheels
    print(f"downloading wheels for {target_name(target)}", flush=True)  # a first build: a few hundred MB
    pins = pins_for(target)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:  # then atomic moves: parallel runs never clash
        done = pip_download(target, Path(tmp), [f"{n}=={v}" for n, v in sorted(pins.items())])
        if done.returncode:
            raise BuildError(f"pip download for {target_name(target)} failed:\n{done.stderr[-3000:]}")
        names = sorted(path.name for path in Path(tmp).glob("*.whl"))
        got = {str(parse_wheel_filename(n)[0]): str(parse_wheel_filename(n)[1]) for n in names}
        if got != pins or len(names) != len(pins):
            raise BuildError(f"pip download for {target_name(target)} gave {names}, not {pins}")
        for name in names:
            os.replace(Path(tmp) / name, cache / name)
    listing.parent.mkdir(exist_ok=True)
    listing.write_text("\n".join(names) + "\n")
    return [cache / name for name in names]


def wheels_for_all(
    cache: Path, project_wheel: Path | None, targets: list[Target] = TARGETS, jobs: int = 4
) -> Wheels:
    """{target: wheels} (+ project_wheel, checked for closure); an abi3 wheel as the oldest CPython's."""
    cache.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        resolved = dict(zip(targets, pool.map(lambda t: resolve(t, cache), targets), strict=True))
    chosen: Wheels = {}
    for (plat, py), wheels in resolved.items():
        oldest = resolved.get((plat, PYTHONS[0]), wheels)
        abi3 = {parse_wheel_filename(w.name)[0]: w for w in oldest if w.name.split("-")[-2] == "abi3"}
        for i, wheel in enumerate(wheels):
            if "abi3" in wheel.name.split("-")[-2].split("."):
                wheels[i] = abi3.get(parse_wheel_filename(wheel.name)[0], wheel)
        chosen[(plat, py)] = sorted(wheels + ([project_wheel] if project_wheel else []))
        if project_wheel:
            check_closed((plat, py), chosen[(plat, py)])
    return chosen


def _metadata(wheel: Path) -> tuple[str, str, list[Requirement]]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        headers = email.message_from_bytes(z.read(meta))
    requires = [Requirement(r) for r in headers.get_all("Requires-Dist", [])]
    return canonicalize_name(headers["Name"]), headers["Version"], requires


def check_closed(target: Target, wheels: list[Path]) -> None:
    """Every requirement reachable from robot-md-mcp on target is met by exactly these wheels."""
    dists = {name: (version, reqs) for name, version, reqs in map(_metadata, wheels)}
    env = marker_env(target)
    todo, seen = [("robot-md-mcp", frozenset[str]())], set()
    while todo:
        name, extras = todo.pop()
        if (name, extras) in seen:
            continue
        seen.add((name, extras))
        for req in dists[name][1]:
            if req.marker and not any(req.marker.evaluate({**env, "extra": e}) for e in {"", *extras}):
                continue
            dep = canonicalize_name(req.name)
            if dep not in dists or not req.specifier.contains(dists[dep][0], prereleases=True):
                got = dists[dep][0] if dep in dists else "nothing"
                raise BuildError(f"{target_name(target)}: {name} requires {req}, constraints.txt gives {got}")
            todo.append((dep, frozenset(req.extras)))
    unused = set(dists) - {name for name, _ in seen}
    if unused:
        raise BuildError(f"{target_name(target)}: constraints.txt pins unused {sorted(unused)}")


def keep(dist: str, path: str) -> bool:
    if DROP_DIRS & set(path.split("/")[1:-1]) or any(fnmatch.fnmatch(path, p) for p in DROP_FILES):
        return False
    return dist != "pywin32" or any(fnmatch.fnmatch(path, p) for p in PYWIN32_KEEP)


def read(z: zipfile.ZipFile, member: str, cpu: int | None) -> bytes:
    """A member's bytes; of a fat Mach-O file only cpu's slice (what `lipo -thin` writes)."""
    data = z.read(member)
    if cpu is None or not member.endswith(NATIVE) or data[:4] not in FAT_MAGIC:
        return data
    entry = struct.Struct(">iiQQII" if data[3] == 0xBF else ">iiIII")
    for i in range(int.from_bytes(data[4:8], "big")):
        cputype, _, offset, size, *_ = entry.unpack_from(data, 8 + i * entry.size)
        if cputype == cpu:
            return data[offset : offset + size]
    raise BuildError(f"fat Mach-O file without a slice for CPU type {cpu:#x}")


@functools.cache
def wheel_files(wheel: Path, cpu: int | None = None) -> dict[str, tuple[str, str]]:
    """{site-packages path: (sha256, member)} of what we keep from the wheel (for a Mac CPU: thinned)."""
    dist = parse_wheel_filename(wheel.name)[0]
    files = {}
    with zipfile.ZipFile(wheel) as z:
        for member in (m for m in z.namelist() if not m.endswith("/")):
            head, _, rest = member.partition("/")
            kind, _, path = rest.partition("/") if head.endswith(".data") else ("purelib", "", member)
            if kind in ("purelib", "platlib") and keep(dist, path):  # a .data's scripts etc. are unused
                data = read(z, member, cpu)
                if not path.endswith(NATIVE):  # Windows wheels may carry CRLF copies of the same text
                    data = data.replace(b"\r\n", b"\n")
                files[path] = (hashlib.sha256(data).hexdigest(), member)
    return files


def plan(wheels: Wheels) -> tuple[Layout, dict[str, list[str]]]:
    """Where each file of each target's wheels goes in the merged tree, and INDEX's "only": the targets
    that use each member not every target uses."""
    targets = sorted(wheels)
    trees: dict[str, Tree] = defaultdict(dict)
    owner: dict[str, str] = {}
    # Only native code may differ, and releases constraints.txt pins differently (docs/packaging.md).
    first: dict[tuple[str, str], tuple[str, Target]] = {}
    for t in targets:
        cpu = MACHO_CPU.get(t[0])
        for wheel in wheels[t]:
            dist, release = parse_wheel_filename(wheel.name)[0], "-".join(wheel.name.split("-")[:2])
            for path, (digest, member) in wheel_files(wheel, cpu).items():
                seen = first.setdefault((release, path), (digest, t))
                if seen[0] != digest and not path.endswith(NATIVE):
                    raise BuildError(
                        f"collision: {path} from {release} differs between {target_name(seen[1])} and"
                        f" {target_name(t)}, and it is not native code: teach build_pyz.py why that is safe"
                    )
                # A distribution moves as one unit (pywin32.pth names its packages by relative paths).
                if owner.setdefault(path.split("/")[0], dist) != dist:
                    raise BuildError(f"{dist} and {owner[path.split('/')[0]]} both install {path}")
                trees[dist].setdefault(t, {})[path] = (digest, wheel, member, cpu)
    layout: Layout = {}
    users: dict[str, set[Target]] = defaultdict(set)
    for top in sorted(trees):
        for key, group in place(trees[top], targets).items():
            for t in group:
                for path, (_, wheel, member, cpu) in trees[top][t].items():
                    where = f"{key}/{path}" if key else path
                    layout[where] = (wheel, member, cpu)
                    users[where].add(t)
    return layout, {
        f"site-packages/{w}": sorted(map(target_name, g)) for w, g in users.items() if g != set(targets)
    }


def _content(tree: Tree, group: list[Target]) -> frozenset[tuple[str, str]]:
    return frozenset((p, v[0]) for t in group for p, v in tree[t].items())


def _consistent(tree: Tree, group: list[Target]) -> bool:  # the same file wherever two have one
    return len({p for p, _ in _content(tree, group)}) == len(_content(tree, group))


def place(tree: Tree, targets: list[Target]) -> dict[str, list[Target]]:
    """{dir: targets whose copy of one distribution goes there}: shared where all agree, else the
    coarsest split that agrees; the most common content stays shared (docs/packaging.md)."""
    present = sorted(tree)
    everywhere = len(present) == len(targets)
    restricted = set() if everywhere else _restrictions(present, targets)
    if not restricted and _consistent(tree, present):
        return {"": present}
    groups = _split(tree, present, restricted)
    result = {"_platform/" + key: group for key, group in groups.items()}
    if everywhere:  # the most common content first, then each group that agrees with it, is shared
        popularity: dict[frozenset[tuple[str, str]], int] = defaultdict(int)
        for group in groups.values():
            popularity[_content(tree, group)] += len(group)
        result[""] = []
        for key, group in sorted(groups.items(), key=lambda kv: (-popularity[_content(tree, kv[1])], kv[0])):
            if _consistent(tree, result[""] + group):
                result[""] += group
                del result["_platform/" + key]
    return result


def _restrictions(present: list[Target], targets: list[Target]) -> set[str]:
    """The groupings ("python", "platform") whose every target has a distribution present on some."""
    seen = {how: {GROUPINGS[how](p) for p in present} for how in ("python", "platform")}
    return {
        how for how, keys in seen.items() if {t for t in targets if GROUPINGS[how](t) in keys} == set(present)
    }


def _split(tree: Tree, present: list[Target], restricted: set[str]) -> dict[str, list[Target]]:
    """The coarsest grouping of present that keeps the restrictions and whose groups agree."""
    for how, dims in (("python", {"python"}), ("platform", {"platform"}), ("target", {"python", "platform"})):
        groups: dict[str, list[Target]] = defaultdict(list)
        for t in present:
            groups[GROUPINGS[how](t)].append(t)
        if restricted <= dims and all(_consistent(tree, g) for g in groups.values()):
            break
    return groups


def _mode(name: str) -> int:  # the same on every build machine, whatever its umask
    return 0o100755 if name.endswith(NATIVE) else 0o100644


def write_tree(layout: Layout, site: Path) -> None:
    by_wheel: dict[Path, list[tuple[str, str, int | None]]] = defaultdict(list)
    for where, (wheel, member, cpu) in layout.items():
        by_wheel[wheel].append((where, member, cpu))
    for wheel, items in sorted(by_wheel.items()):
        with zipfile.ZipFile(wheel) as z:
            for dest, member, cpu in items:
                out = site / dest
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(read(z, member, cpu))
                out.chmod(_mode(dest) & 0o777)  # not the builder's umask


def guard_targets(wheels: Wheels) -> Targets:
    """pyz_guard.TARGETS: per platform its CPythons and the newest glibc or macOS any wheel needs (each
    wheel the oldest its tags accept: [2, 17], [11, 0])."""
    info: Targets = {}
    for (plat, py), ws in sorted(wheels.items()):
        entry = info.setdefault(plat, {"pythons": []})
        entry["pythons"].append(py)
        for wheel, (field, system) in itertools.product(ws, (("glibc", "manylinux"), ("macos", "macosx"))):
            name = wheel.name.replace("manylinux2014", "manylinux_2_17")
            accepted = [[int(a), int(b)] for a, b in re.findall(rf"\b{system}_(\d+)_(\d+)_", name)]
            if accepted:
                entry[field] = max(entry.get(field, [0, 0]), min(accepted))
    return info


def entry(targets: Targets, build_id: str) -> bytes:
    """pyz_guard.py with this build's targets and id: the pyz's __main__.py."""
    text = (HERE / "pyz_guard.py").read_text()
    fill = {"TARGETS": json.dumps(targets, sort_keys=True), "BUILD_ID": f'"{build_id}"'}
    pattern = "(?m)^(TARGETS|BUILD_ID) = .*  # build_pyz.py fills this in$"
    if re.findall(pattern, text) != list(fill):
        raise BuildError(f"pyz_guard.py must hold TARGETS, then BUILD_ID, once each, as {pattern!r}")
    return re.sub(pattern, lambda m: f"{m[1]} = {fill[m[1]]}", text).encode()


def write_pyz(site: Path, out: Path, targets: Targets, only: dict[str, list[str]]) -> None:
    """The pyz: site under site-packages/, the index, and our entry whose build id digests the rest."""
    found: dict[str, tuple[int, Callable[[], bytes]]] = {
        f"site-packages/{path.relative_to(site).as_posix()}": (_mode(path.name) << 16, path.read_bytes)
        for path in site.rglob("*")
        if path.is_file()
    }
    pyz_index = json.dumps({"only": only}, sort_keys=True, separators=(",", ":")).encode()
    found[INDEX] = (0o100644 << 16, lambda: pyz_index)
    digest = hashlib.sha256(entry(targets, "0" * 16))
    for name in sorted(found):
        data = found[name][1]()
        digest.update(b"%d:%s:%d:" % (len(name), name.encode(), len(data)) + data)
    found["__main__.py"] = (0o100644 << 16, lambda: entry(targets, digest.hexdigest()[:16]))
    with out.open("wb") as f:
        f.write(SHEBANG)
        with zipfile.ZipFile(f, "w") as archive:
            for name in sorted(found, key=lambda n: (n != "__main__.py", n)):
                info = zipfile.ZipInfo(name, DATE)
                info.external_attr = found[name][0]
                archive.writestr(info, found[name][1](), zipfile.ZIP_DEFLATED)
    out.chmod(0o755)


def interpreters() -> dict[str, str]:
    """CPython X.Y -> an interpreter of that version on PATH (python3.X), for bytecode."""
    this = f"{sys.version_info[0]}.{sys.version_info[1]}"
    found = {this: sys.executable} if sys.implementation.name == "cpython" and this in PYTHONS else {}
    check = "import sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2])"
    for py in (py for py in PYTHONS if py not in found):
        exe = shutil.which(f"python{py}") or ""
        said = subprocess.run([exe, "-c", check], capture_output=True, text=True).stdout if exe else ""
        if said.split() == ["cpython", py]:
            found[py] = exe
    return found


def session_files(host: Target, wheels: list[Path]) -> list[str]:
    """The site-packages files a session (validate, render, stdio) loads from host's slim tree."""
    with tempfile.TemporaryDirectory() as work:
        site, record_to = Path(work) / "site", Path(work) / "loaded.txt"
        write_tree(plan({host: wheels})[0], site)
        command = [sys.executable, "-c", RECORD, str(site)]
        env = {**os.environ, "RECORD_TO": str(record_to)}
        session = [sys.executable, str(SESSION), "--", *command]
        for argv in ([*command, "validate"], [*command, "render"], session):
            done = subprocess.run(
                [*argv, str(EXAMPLE)], env=env, cwd=work, capture_output=True, text=True, timeout=300
            )
            if done.returncode:
                raise BuildError(f"recording a session failed: {(done.stdout + done.stderr)[-2000:]}")
        return sorted(set(record_to.read_text().split()))


def compile_bytecode(site: Path, python: str, loaded: list[str]) -> None:
    """Unchecked-hash bytecode by `python` for what a session loads, naming `site-packages/...` paths."""
    script = (
        "import json, py_compile, sys\n"
        "site, unchecked = sys.argv[1], py_compile.PycInvalidationMode.UNCHECKED_HASH\n"
        "for path in json.load(sys.stdin):\n"
        "    py_compile.compile(f'{site}/{path}', None, f'site-packages/{path}', True, 0, unchecked)\n"
    )
    paths = json.dumps([p for p in loaded if (site / p).is_file()])
    # A fixed hash seed: frozenset constants (`x in {"a", "b"}`) are marshalled in hash order.
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    command = [python, "-c", script, str(site)]
    done = subprocess.run(command, input=paths, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise BuildError(f"compiling bytecode with {python} failed: {(done.stdout + done.stderr)[-2000:]}")


def build_one(wheels: Wheels, out: Path, bytecode: str | None = None, loaded: tuple[str, ...] = ()) -> Path:
    """One pyz of wheels' targets, with bytecode by `bytecode` for `loaded`."""
    with tempfile.TemporaryDirectory() as work:
        site = Path(work) / "site"
        layout, only = plan(wheels)
        write_tree(layout, site)
        if bytecode and loaded:
            compile_bytecode(site, bytecode, list(loaded))
        write_pyz(site, out, guard_targets(wheels), only)
    return out


def slim_name(target: Target, version: str) -> str:
    """robot-md-mcp-0.9.0-cp312-manylinux_x86_64.pyz: the slim file for target."""
    return f"robot-md-mcp-{version}-{GROUPINGS['python'](target)}-{PLATFORMS[target[0]][2]}.pyz"


def build(args: argparse.Namespace) -> None:
    """The release set, or with --here only this machine's slim pyz, into args.dist (emptied of pyz):
    the universal pyz (no bytecode) and the slim ones, with bytecode by each CPython on PATH."""
    version, dist = str(parse_wheel_filename(args.project_wheel.name)[1]), args.dist
    this = GUARD["describe_this_interpreter"]()
    name, problem = GUARD["buildable_here"](this)  # the target this build runs as, if a pyz serves it
    if args.here and problem:  # no pyz serves this machine or CPython: one line, exit 2, before any download
        print(problem, file=sys.stderr)
        raise SystemExit(2)
    host = (name.rsplit("-", 1)[0], ".".join(map(str, this["version"][:2]))) if name else None
    dist.mkdir(parents=True, exist_ok=True)
    for old in dist.glob("robot-md-mcp*.pyz"):
        old.unlink()
    started = time.monotonic()
    targets = [host] if args.here and host else TARGETS
    wheels = wheels_for_all(args.cache.resolve(), args.project_wheel.resolve(), targets)
    print(f"wheels ready ({time.monotonic() - started:.0f} s)", flush=True)
    pythons = {targets[0][1]: sys.executable} if args.here else interpreters()
    loaded = tuple(session_files(host, wheels[host])) if host and host in wheels else ()
    made_by = ", ".join(pythons) if loaded else "(none: this CPython is no target)"
    print(f"a session loads {len(loaded)} files; bytecode for them in the slim pyz for CPython {made_by}")
    with concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        slim = [
            pool.submit(build_one, {t: wheels[t]}, dist / slim_name(t, version), pythons.get(t[1]), loaded)
            for t in targets
        ]
        if not args.here:
            build_one(wheels, dist / "robot-md-mcp.pyz")
        for job in slim:
            job.result()


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    for option in ("--project-wheel", "--dist", "--cache"):
        parser.add_argument(option, type=Path, required=True)
    parser.add_argument("--here", action="store_true", help="only the slim pyz for this machine and CPython")
    args = parser.parse_args()
    started = time.monotonic()
    try:
        build(args)
    except BuildError as e:
        print(f"build_pyz: {e}", file=sys.stderr)
        return 1
    pyzs = sorted(args.dist.glob("robot-md-mcp*.pyz"))
    print("".join(f"{p.stat().st_size / 1e6:7.1f} MB  {p}\n" for p in pyzs), end="")
    print(f"built {len(pyzs)} pyz in {time.monotonic() - started:.0f} s")
    over = [p for p in pyzs if p.stat().st_size > BUDGET_MB.get(p.name, 16) * 1e6]
    for p in over:
        print(f"build_pyz: {p.name} is over its {BUDGET_MB.get(p.name, 16)} MB budget", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
