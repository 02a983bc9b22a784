"""Build robot-md-mcp's zipapps: dist/robot-md-mcp.pyz for every supported machine, plus one slim pyz
per (platform, CPython) target and dist/SHA256SUMS. Run by `./build.sh pyz` inside a build venv that
holds shiv==1.0.8 and packaging.

1. For each target, the pins of constraints.txt whose markers hold there, as wheels from the cache
   (pip download --no-deps only for what the cache lacks), checked to be closed under Requires-Dist.
2. Read the wheels, dropping what is never imported (tests, stubs, most of pywin32), and merge all
   targets into one site-packages tree: a distribution whose files agree everywhere is shared; one
   whose files differ under the same path goes to `_platform/<dir>/` directories that the .pth hook
   (pyz_hook.py) puts first on sys.path for the matching interpreter. Only native code may differ
   within one release; any other difference fails the build.
3. shiv --reproducible zips the tree, with pyz_guard.py as the zip's __main__.py.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import fnmatch
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename

from packaging import tags

HERE = Path(__file__).resolve().parent
PYTHONS = ("3.10", "3.11", "3.12", "3.13", "3.14")


def _manylinux(arch: str) -> list[str]:
    # pip --platform matches tags exactly, so list every glibc we accept. Oldest first: pip (and
    # select()) rank by this order, and one pyz should run on as old a glibc as its wheels allow.
    return [f"manylinux2014_{arch}"] + [f"manylinux_2_{v}_{arch}" for v in range(17, 29)]


# platform key (as pyz_guard.platform_key names it) -> (wheel platform tags, platform_machine, slim name)
PLATFORMS = {
    "darwin-arm64": (list(tags.mac_platforms((11, 0), "arm64")), "arm64", "macosx_arm64"),
    "darwin-x86_64": (list(tags.mac_platforms((11, 0), "x86_64")), "x86_64", "macosx_x86_64"),
    "linux-aarch64": (_manylinux("aarch64"), "aarch64", "manylinux_aarch64"),
    "linux-x86_64": (_manylinux("x86_64"), "x86_64", "manylinux_x86_64"),
    "win32-amd64": (["win_amd64"], "AMD64", "win_amd64"),
}
SYSTEM = {"linux": ("Linux", "posix"), "darwin": ("Darwin", "posix"), "win32": ("Windows", "nt")}
TARGETS = [(plat, py) for plat in PLATFORMS for py in PYTHONS]
NATIVE = (".so", ".pyd", ".dll", ".dylib")
HOOK = "_robot_md_mcp_pyz"  # pyz_guard.MARKER is HOOK + ".py"

# Never imported when serving: test suites, type stubs, bytecode, and the wheel bookkeeping that
# differs per wheel build (RECORD, WHEEL, SBOMs; a zipapp is never pip-uninstalled).
DROP_DIRS = {"__pycache__", "tests", "test", "benchmarks"}
DROP_FILES = ("*.pyi", "*.pyc", "*.dist-info/RECORD", "*.dist-info/WHEEL", "*.dist-info/INSTALLER")
DROP_FILES += ("*.dist-info/sboms/*",)  # one per build (random serial numbers): would describe 1 of 25
# pywin32 is ~15 MB per CPython; mcp.os.win32.utilities imports pywintypes, win32api, win32con and
# win32job, and those need _win32sysloader, pywintypes3XY.dll and the bootstrap that pywin32.pth runs.
PYWIN32_KEEP = (
    "pywin32.pth",
    "pywin32-*.dist-info/*",
    "pywin32_system32/pywintypes3*.dll",
    "win32/License.txt",
    "win32/_win32sysloader*.pyd",
    "win32/win32api*.pyd",
    "win32/win32job*.pyd",
    "win32/lib/pywin32_bootstrap.py",
    "win32/lib/pywintypes.py",
    "win32/lib/win32con.py",
    "win32/lib/winerror.py",
)


class BuildError(Exception):
    pass


def target_name(target: tuple[str, str]) -> str:
    plat, py = target
    return f"{plat}-cp{py.replace('.', '')}"


# --- 1. which wheels --------------------------------------------------------------------------------


def marker_env(target: tuple[str, str]) -> dict[str, str]:
    plat, py = target
    system, os_name = SYSTEM[plat.split("-")[0]]
    return {
        "python_version": py,
        "python_full_version": py + ".0",
        "implementation_name": "cpython",
        "implementation_version": py + ".0",
        "platform_python_implementation": "CPython",
        "sys_platform": plat.split("-")[0],
        "platform_system": system,
        "os_name": os_name,
        "platform_machine": PLATFORMS[plat][1],
        "platform_release": "",
        "platform_version": "",
        "extra": "",
    }


def pins_for(target: tuple[str, str], constraints: Path = HERE / "constraints.txt") -> dict[str, str]:
    """{canonical name: version} of the constraints that apply to target."""
    pins: dict[str, str] = {}
    for line in constraints.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        req = Requirement(line)
        if req.marker and not req.marker.evaluate(marker_env(target)):
            continue
        (spec,) = req.specifier
        name = canonicalize_name(req.name)
        if spec.operator != "==" or name in pins:
            raise BuildError(f"constraints.txt: {line!r}: need exactly one `==` pin per target")
        pins[name] = spec.version
    return pins


def resolution_file(target: tuple[str, str], cache: Path) -> Path:
    """Where the wheels pip chose for target are listed, keyed by everything that shaped the choice."""
    inputs = (HERE / "constraints.txt").read_text() + json.dumps(PLATFORMS[target[0]][0])
    key = hashlib.sha256(inputs.encode()).hexdigest()[:16]
    return cache / "resolved" / f"{target_name(target)}-{key}.txt"


def resolve(target: tuple[str, str], cache: Path) -> list[Path]:
    """The wheels of target's pins, as `pip download --no-deps` picks them (pip ranks wheel tags by
    the order of --platform). Reused from the cache when the same inputs picked them before, so the
    result never depends on which other wheels happen to be cached."""
    listing = resolution_file(target, cache)
    if listing.exists():
        wheels = [cache / name for name in listing.read_text().split()]
        if all(w.exists() for w in wheels):
            return wheels
    plat, py = target
    pins = pins_for(target)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:  # then atomic moves: parallel runs never clash
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check"]
        cmd += ["--no-deps", "--only-binary=:all:", "--implementation", "cp", "--python-version", py]
        cmd += ["--abi", "cp" + py.replace(".", ""), "--dest", tmp]
        for tag in PLATFORMS[plat][0]:
            cmd += ["--platform", tag]
        cmd += [f"{name}=={version}" for name, version in sorted(pins.items())]
        done = subprocess.run(cmd, capture_output=True, text=True)
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


def _abis(wheel: Path) -> set[str]:
    return {t.abi for t in parse_wheel_filename(wheel.name)[3]}


def wheels_for_all(
    cache: Path, project_wheel: Path | None, jobs: int = 4
) -> dict[tuple[str, str], list[Path]]:
    """{target: wheels} (+ project_wheel, checked for closure), downloading only what the cache
    lacks. An abi3 wheel (cryptography) is taken as the platform's oldest CPython takes it, so all
    CPythons share one build."""
    cache.mkdir(parents=True, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        resolved = dict(zip(TARGETS, pool.map(lambda t: resolve(t, cache), TARGETS), strict=True))
    chosen: dict[tuple[str, str], list[Path]] = {}
    for (plat, py), wheels in resolved.items():
        oldest = {parse_wheel_filename(w.name)[0]: w for w in resolved[(plat, PYTHONS[0])]}
        for i, wheel in enumerate(wheels):
            base = oldest.get(parse_wheel_filename(wheel.name)[0])
            if base and _abis(wheel) == _abis(base) == {"abi3"}:
                wheels[i] = base
        if project_wheel is None:
            chosen[(plat, py)] = sorted(wheels)
        else:
            chosen[(plat, py)] = sorted([*wheels, project_wheel])
            check_closed((plat, py), chosen[(plat, py)])
    return chosen


def _metadata(wheel: Path) -> tuple[str, str, list[Requirement]]:
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode("utf-8")
    headers = text.split("\n\n", 1)[0].splitlines()
    get = {k: v.strip() for k, _, v in (h.partition(":") for h in headers) if k in ("Name", "Version")}
    requires = [Requirement(h.partition(":")[2].strip()) for h in headers if h.startswith("Requires-Dist:")]
    return canonicalize_name(get["Name"]), get["Version"], requires


def check_closed(target: tuple[str, str], wheels: list[Path]) -> None:
    """Every requirement reachable from robot-md-mcp on target is met by exactly these wheels, and
    every wheel is needed (pip cannot check this: its markers see the machine running pip)."""
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


# --- 2. one tree -----------------------------------------------------------------------------------


def keep(dist: str, path: str) -> bool:
    parts = path.split("/")
    if DROP_DIRS & set(parts[1:-1]) or any(fnmatch.fnmatch(path, p) for p in DROP_FILES):
        return False
    return dist != "pywin32" or any(fnmatch.fnmatch(path, p) for p in PYWIN32_KEEP)


# Mach-O CPU types: a universal2 (fat) binary carries both; each Mac needs only its own slice.
MACHO_CPU = {"darwin-arm64": 0x0100000C, "darwin-x86_64": 0x01000007}


def thin(data: bytes, cpu: int | None) -> bytes:
    """The slice for cpu of a fat Mach-O file (what `lipo -thin` writes; each slice carries its own
    code signature), else data unchanged. cryptography's last Intel-Mac wheels are universal2."""
    if cpu is None or data[:4] not in (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf"):
        return data
    wide = data[3] == 0xBF
    entry = struct.Struct(">iiQQII" if wide else ">iiIII")
    for i in range(int.from_bytes(data[4:8], "big")):
        cputype, _, offset, size, *_ = entry.unpack_from(data, 8 + i * entry.size)
        if cputype == cpu:
            return data[offset : offset + size]
    raise BuildError(f"fat Mach-O file without a slice for CPU type {cpu:#x}")


def read(z: zipfile.ZipFile, member: str, cpu: int | None) -> bytes:
    data = z.read(member)
    return thin(data, cpu) if member.endswith(NATIVE) else data


_files_cache: dict[tuple[Path, int | None], dict[str, tuple[str, str]]] = {}


def wheel_files(wheel: Path, cpu: int | None = None) -> dict[str, tuple[str, str]]:
    """{site-packages path: (sha256, member)} of what we keep from the wheel (for a Mac CPU: thinned)."""
    if (wheel, cpu) not in _files_cache:
        dist = parse_wheel_filename(wheel.name)[0]
        files = {}
        with zipfile.ZipFile(wheel) as z:
            for member in z.namelist():
                path = member
                if member.endswith("/"):
                    continue
                head, _, rest = member.partition("/")
                if head.endswith(".data"):  # purelib/platlib install at the root; scripts etc. unused
                    kind, _, path = rest.partition("/")
                    if kind not in ("purelib", "platlib"):
                        continue
                if keep(dist, path):
                    data = read(z, member, cpu)
                    if not path.endswith(NATIVE):  # Windows wheels may carry CRLF copies of the same text
                        data = data.replace(b"\r\n", b"\n")
                    files[path] = (hashlib.sha256(data).hexdigest(), member)
        _files_cache[(wheel, cpu)] = files
    return _files_cache[(wheel, cpu)]


def plan(wheels: dict[tuple[str, str], list[Path]]) -> dict[tuple[str, str], tuple[Path, str, int | None]]:
    """{(dir, path): (wheel, member)}: dir "" is the shared tree, else "_platform/<key>"."""
    targets = sorted(wheels)
    trees: dict[str, dict[tuple[str, str], dict[str, tuple]]] = defaultdict(dict)
    owner: dict[str, str] = {}
    for t in targets:
        cpu = MACHO_CPU.get(t[0])
        for wheel in wheels[t]:
            dist = parse_wheel_filename(wheel.name)[0]
            for path, (digest, member) in wheel_files(wheel, cpu).items():
                # A distribution moves as one unit: pywin32.pth's relative paths, for one, must
                # land in the same directory as the packages they name.
                if owner.setdefault(path.split("/")[0], dist) != dist:
                    raise BuildError(f"{dist} and {owner[path.split('/')[0]]} both install {path}")
                entry = trees[dist].setdefault(t, {})
                if path in entry and entry[path][0] != digest:
                    raise BuildError(f"{target_name(t)}: two wheels install different {path}")
                entry[path] = (digest, wheel, member, cpu)
    layout: dict[tuple[str, str], tuple[Path, str, int | None]] = {}
    for top in sorted(trees):
        for key, group in place(top, trees[top], targets).items():
            for t in group:
                for path, (_, wheel, member, cpu) in trees[top][t].items():
                    layout[(key, path)] = (wheel, member, cpu)
    return layout


def _consistent(tree: dict, group: list) -> bool:
    merged: dict[str, str] = {}
    return all(merged.setdefault(p, v[0]) == v[0] for t in group for p, v in tree[t].items())


KEYS = {
    "python": lambda t: "cp" + t[1].replace(".", ""),
    "platform": lambda t: t[0],
    "target": target_name,
}


def place(top: str, tree: dict, targets: list) -> dict[str, list]:
    """{dir: targets whose copy of distribution `top` goes there}.

    Shared if every target agrees and `top` is not restricted to some platforms (pywin32) or some
    CPythons (exceptiongroup on 3.10); else the coarsest split - by CPython, platform, or both, and
    always along the dimensions that restrict it - under which each group agrees. When every target
    has `top`, the groups holding its most common content stay shared and the others override it."""
    present = sorted(tree)
    _check_differences(top, tree, present)
    restricted = {
        how
        for how in ("python", "platform")
        if len(present) < len(targets)
        and {t for t in targets if KEYS[how](t) in {KEYS[how](p) for p in present}} == set(present)
    }
    if not restricted and _consistent(tree, present):
        return {"": present}
    for how, dims in (("python", {"python"}), ("platform", {"platform"}), ("target", {"python", "platform"})):
        groups: dict[str, list] = defaultdict(list)
        for t in present:
            groups[KEYS[how](t)].append(t)
        if restricted <= dims and all(_consistent(tree, g) for g in groups.values()):
            break
    result = {"_platform/" + key: group for key, group in groups.items()}
    if len(present) == len(targets):

        def content(group: list) -> frozenset:
            return frozenset((p, v[0]) for t in group for p, v in tree[t].items())

        popularity = defaultdict(int)
        for group in groups.values():
            popularity[content(group)] += len(group)
        shared: list = []
        for key, group in sorted(groups.items(), key=lambda kv: (-popularity[content(kv[1])], kv[0])):
            if _consistent(tree, shared + group):
                shared += group
                del result["_platform/" + key]
        result[""] = shared
    return result


def _check_differences(top: str, tree: dict, present: list) -> None:
    """Allowed to differ: native code; other files only where constraints.txt pins different
    releases (3.10's older ones, Intel Macs' cryptography)."""
    seen: dict[tuple[str, str], tuple[str, tuple[str, str]]] = {}
    for t in present:
        for path, (digest, wheel, *_) in tree[t].items():
            if path.endswith(NATIVE):
                continue
            release = "-".join(wheel.name.split("-")[:2])
            first = seen.setdefault((release, path), (digest, t))
            if first[0] != digest:
                raise BuildError(
                    f"collision: {path} from {release} differs between {target_name(first[1])} and"
                    f" {target_name(t)}, and it is not native code: teach build_pyz.py why that is safe"
                )


def write_tree(layout: dict[tuple[str, str], tuple[Path, str, int | None]], site: Path) -> None:
    by_wheel: dict[Path, list[tuple[str, str, int | None]]] = defaultdict(list)
    for (key, path), (wheel, member, cpu) in layout.items():
        by_wheel[wheel].append((f"{key}/{path}" if key else path, member, cpu))
    for wheel, items in sorted(by_wheel.items()):
        with zipfile.ZipFile(wheel) as z:
            for dest, member, cpu in items:
                out = site / dest
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_bytes(read(z, member, cpu))
                out.chmod(0o755 if dest.endswith(NATIVE) else 0o644)  # not the builder's umask
    for name in (HOOK + ".py", HOOK + ".pth"):
        if (site / name).exists():
            raise BuildError(f"a wheel installs {name}, which the pyz hook needs")
    shutil.copyfile(HERE / "pyz_hook.py", site / (HOOK + ".py"))
    (site / (HOOK + ".pth")).write_text(f"import {HOOK}; {HOOK}.activate()\n")
    for name in (HOOK + ".py", HOOK + ".pth"):
        (site / name).chmod(0o644)


# --- 3. zip ----------------------------------------------------------------------------------------


def _tag_min(wheels: list[Path], prefix: str) -> list[int] | None:
    """The newest glibc/macOS any of the wheels needs ([2, 28], [11, 0]), or None."""
    need = None
    for wheel in wheels:
        versions = []
        for tag in parse_wheel_filename(wheel.name)[3]:
            p = tag.platform.replace("manylinux2014", "manylinux_2_17")
            if p.startswith(prefix):
                versions.append([int(x) for x in p[len(prefix) :].split("_")[:2]])
        if versions:
            need = max(need or [0, 0], min(versions))
    return need


def guard_targets(wheels: dict[tuple[str, str], list[Path]]) -> dict[str, dict]:
    info: dict[str, dict] = {}
    for (plat, py), ws in sorted(wheels.items()):
        entry = info.setdefault(plat, {"pythons": []})
        entry["pythons"].append(py)
        for field, prefix in (("glibc", "manylinux_"), ("macos", "macosx_")):
            need = _tag_min(ws, prefix)
            if need:
                entry[field] = max(entry.get(field, need), need)
    return info


def shiv(site: Path, out: Path, targets: dict[str, dict]) -> None:
    import shiv.builder
    import shiv.cli

    guard = (HERE / "pyz_guard.py").read_text()
    placeholder = "TARGETS = {}  # build_pyz.py fills this in"
    assert placeholder in guard
    guard = guard.replace(placeholder, f"TARGETS = {json.dumps(targets, sort_keys=True)}")
    # shiv 1.0.8 writes MAIN_TEMPLATE.format(module=..., fn=...) as the zip's __main__.py.
    shiv.builder.MAIN_TEMPLATE = guard.replace("{", "{{").replace("}", "}}")
    args = ["--site-packages", str(site), "-e", "robot_md_mcp:main", "-o", str(out)]
    args += ["--reproducible", "--compressed", "-p", "/usr/bin/env python3"]
    shiv.cli.main.main(args=args, standalone_mode=False)


def interpreters() -> dict[str, str]:
    """CPython X.Y -> an interpreter of that version on PATH (python3.X), for bytecode."""
    this = f"{sys.version_info[0]}.{sys.version_info[1]}"
    found = {this: sys.executable} if sys.implementation.name == "cpython" and this in PYTHONS else {}
    for py in PYTHONS:
        if py in found:
            continue
        exe = shutil.which(f"python{py}")
        if exe is None:
            continue
        check = "import sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2])"
        done = subprocess.run([exe, "-c", check], capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.split() == ["cpython", py]:
            found[py] = exe
    return found


def compile_bytecode(site: Path, python: str) -> None:
    """__pycache__/*.cpython-3XY.pyc beside every module, so a first run only unpacks (compiling
    the SDK and pydantic is over a second of a slim pyz's first start, and every start's when
    bytecode cannot be written: a read-only unpack folder, PYTHONDONTWRITEBYTECODE). Unchecked-hash
    pycs do not depend on file times, and the build folder is stripped from the recorded paths,
    so the build stays reproducible; Python points code at the real file when it loads it."""
    script = (
        "import compileall, py_compile, sys\n"
        "ok = compileall.compile_dir(sys.argv[1], quiet=1, stripdir=sys.argv[1], prependdir='site-packages',"
        " invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH, workers=1)\n"
        "sys.exit(0 if ok else 1)\n"
    )
    done = subprocess.run([python, "-c", script, str(site)], capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"compiling bytecode with {python} failed: {(done.stdout + done.stderr)[-2000:]}")


def append_bytecode(out: Path, site: Path) -> None:
    """shiv leaves .pyc files out of the zip; add them under site-packages/ as shiv adds files
    (sorted, fixed timestamps, deflated), after the zip it wrote. Its bootstrap unpacks them."""
    with zipfile.ZipFile(out, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        for pyc in sorted(site.rglob("*.pyc"), key=str):
            info = zipfile.ZipInfo(f"site-packages/{pyc.relative_to(site).as_posix()}", (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, pyc.read_bytes())


def build_one(wheels: dict[tuple[str, str], list[Path]], out: Path, bytecode: str | None = None) -> Path:
    with tempfile.TemporaryDirectory() as work:
        site = Path(work) / "site"
        write_tree(plan(wheels), site)
        shiv(site, out, guard_targets(wheels))
        if bytecode:
            compile_bytecode(site, bytecode)
            append_bytecode(out, site)
    return out


def _build_slim(args: tuple[tuple[str, str], list[Path], Path, str | None]) -> Path:
    target, ws, out, bytecode = args
    return build_one({target: ws}, out, bytecode)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--project-wheel", type=Path, required=True)
    parser.add_argument("--dist", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--no-slim", action="store_true", help="only the universal pyz")
    args = parser.parse_args()
    started = time.monotonic()
    version = parse_wheel_filename(args.project_wheel.name)[1]
    try:
        wheels = wheels_for_all(args.cache.resolve(), args.project_wheel.resolve())
        print(f"wheels ready ({time.monotonic() - started:.0f} s)", flush=True)
        args.dist.mkdir(parents=True, exist_ok=True)
        for old in args.dist.glob("robot-md-mcp*.pyz"):
            old.unlink()
        # The universal pyz has no bytecode: five CPythons' worth would add ~20 MB to it.
        pythons = interpreters()
        print(f"bytecode in the slim pyz for CPython {', '.join(pythons) or '(none found on PATH)'}")
        jobs = (
            []
            if args.no_slim
            else [
                (
                    t,
                    wheels[t],
                    args.dist / f"robot-md-mcp-{version}-{KEYS['python'](t)}-{PLATFORMS[t[0]][2]}.pyz",
                    pythons.get(t[1]),
                )
                for t in TARGETS
            ]
        )
        with concurrent.futures.ProcessPoolExecutor(os.cpu_count() or 1) as pool:
            slim = pool.map(_build_slim, jobs)
            build_one(wheels, args.dist / "robot-md-mcp.pyz")
            list(slim)
    except BuildError as e:
        print(f"build_pyz: {e}", file=sys.stderr)
        return 1
    pyzs = sorted(args.dist.glob("robot-md-mcp*.pyz"))
    sums = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.name}\n" for p in pyzs)
    (args.dist / "SHA256SUMS").write_text(sums)
    for p in pyzs:
        print(f"{p.stat().st_size / 1e6:7.1f} MB  {p}")
    print(f"built {len(pyzs)} pyz in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
