"""The universal zipapp (dist/robot-md-mcp.pyz) and the slim ones: `./build.sh pyz` once per module,
then a full MCP session through it on every CPython here, the guard on old ones, the layout for the
platforms that cannot run here, unpack-cache housekeeping, sizes, checksums, reproducibility."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, build_dist, need, posix_only

PYENV = Path("/root/.pyenv/versions")
SERVERS = [
    *(str(PYENV / v / "bin" / "python") for v in ("3.10.13", "3.11.7", "3.12.1", "3.13.0")),
    "/usr/bin/python3",
]
OLD = [str(PYENV / v / "bin" / "python") for v in ("2.7.18", "3.6.15", "3.7.16", "3.8.18", "3.9.18")]
NATIVE = (".so", ".pyd", ".dll", ".dylib")


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


build_pyz = (
    _load("build_pyz", ROOT / "packaging" / "build_pyz.py") if importlib.util.find_spec("packaging") else None
)


build = build_dist


@pytest.fixture(scope="module")
def dist(built_dist: Path) -> Path:
    return built_dist


@pytest.fixture(scope="module")
def pyz(dist: Path) -> Path:
    return dist / "robot-md-mcp.pyz"


@pytest.fixture(scope="module")
def guard(pyz: Path):
    """The pyz's __main__.py (the guard, TARGETS filled in) as an importable module."""
    path = pyz.parent / "guard_from_pyz.py"
    path.write_bytes(zipfile.ZipFile(pyz).read("__main__.py"))
    return _load("guard_from_pyz", path)


def run(python: str, pyz: Path, *args: str, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(
        [python, str(pyz), *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=300,
        env=env if env is not None else os.environ,
        **kw,
    )


# --- a real session on every CPython here ------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("python", SERVERS)
async def test_full_session(python: str, pyz: Path, tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    need(os.access(python, os.X_OK), f"{python} is not installed")
    env = {**os.environ, "SHIV_ROOT": str(tmp_path / "shiv")}
    version = run(python, pyz, "--version", env=env)
    assert version.returncode == 0, version.stderr
    assert version.stdout.strip() == "robot-md-mcp 0.1.0 (pyz, platform linux-x86_64)"
    done = run(python, pyz, "validate", "--json", str(EXAMPLE), env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    params = StdioServerParameters(command=python, args=[str(pyz), str(EXAMPLE)], env=env, cwd=tmp_path)
    async with Client(params, mode="legacy") as client:
        uris = [r.uri for r in (await client.list_resources()).resources]
        assert len(uris) >= 3
        for uri in uris:
            assert (await client.read_resource(uri)).contents[0].text
        assert (await client.call_tool("validate", {})).structured_content["ok"] is True
        rendered = (await client.call_tool("render", {})).structured_content["yaml"]
        assert rendered.startswith("rcan_version: '3.0'")
    # LibYAML made it in (parity with the reference's error messages depends on it).
    (site,) = (tmp_path / "shiv").glob("robot-md-mcp.pyz_*/site-packages")
    code = "import sys; sys.path.insert(0, sys.argv[1]); import yaml; print(yaml.__with_libyaml__)"
    assert subprocess.run([python, "-c", code, str(site)], capture_output=True, text=True).stdout == "True\n"


# --- the guard ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("python", OLD)
def test_old_interpreters_get_one_line(python: str, pyz: Path, tmp_path: Path) -> None:
    need(os.access(python, os.X_OK), f"{python} is not installed")
    done = run(python, pyz, str(EXAMPLE), env={**os.environ, "SHIV_ROOT": str(tmp_path)})
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    version = subprocess.run(
        [python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], capture_output=True, text=True
    ).stdout.strip()
    assert line.startswith("robot-md-mcp: needs 64-bit CPython 3.10-3.14 on Linux")
    assert f"this is {python} cpython {version} on linux" in line  # 2.7 says linux2
    assert not list(tmp_path.iterdir())  # refused before unpacking anything


def test_guard_check_with_faked_interpreters(guard) -> None:
    def check(
        implementation="cpython",
        version=(3, 12, 1),
        sys_platform="linux",
        machine="x86_64",
        pointer_bits=64,
        libc=("glibc", "2.36"),
        os_release="",
        free_threaded=False,
    ):
        return guard.check(
            implementation, version, sys_platform, machine, pointer_bits, libc, os_release, free_threaded
        )

    assert check() == ("linux-x86_64", None)
    assert check(machine="aarch64", version=(3, 14, 0)) == ("linux-aarch64", None)
    assert check(sys_platform="darwin", machine="arm64", libc=("", ""), os_release="14.5") == (
        "darwin-arm64",
        None,
    )
    assert (
        check(sys_platform="darwin", machine="x86_64", libc=("", ""), os_release="10.16")[0]
        == "darwin-x86_64"
    )
    assert check(sys_platform="win32", machine="AMD64", libc=("", "")) == ("win32-amd64", None)
    refused = {
        "macOS's /usr/bin/python3": (
            dict(sys_platform="darwin", machine="arm64", version=(3, 9, 6), os_release="14.5"),
            "brew install python",
        ),
        "32-bit Pi OS": (dict(machine="armv7l", pointer_bits=32), "64-bit"),
        "32-bit userland, 64-bit kernel": (dict(machine="aarch64", pointer_bits=32), "64-bit"),
        "Alpine": (dict(libc=("", "")), "musl"),
        "old glibc": (dict(libc=("glibc", "2.12")), "needs glibc 2.17+"),
        "PyPy": (dict(implementation="pypy"), "pypy (not CPython)"),
        "free-threaded": (dict(free_threaded=True), "free-threaded"),
        "CPython 3.15": (dict(version=(3, 15, 0)), "3.15.0"),
        "Windows on ARM": (dict(sys_platform="win32", machine="ARM64"), "Microsoft Store"),
        "FreeBSD": (dict(sys_platform="freebsd14", machine="amd64"), "pipx"),
        "old macOS": (dict(sys_platform="darwin", machine="x86_64", os_release="10.9"), "needs macOS"),
    }
    for what, (fake, hint) in refused.items():
        key, message = check(**fake)
        assert key is None and "\n" not in message, what
        assert message.startswith("robot-md-mcp: needs 64-bit CPython 3.10-3.14") and hint in message, what


def test_platform_directories_chosen(guard, pyz: Path, tmp_path: Path) -> None:
    """For faked machines, the .pth hook puts exactly the matching _platform dirs first."""
    names = zipfile.ZipFile(pyz).namelist()
    platform_dirs = {n.split("/")[2] for n in names if n.startswith("site-packages/_platform/")}
    assert guard.platform_key("darwin", "arm64", 64) == "darwin-arm64"
    assert guard.platform_key("darwin", "x86_64", 64) == "darwin-x86_64"
    assert guard.platform_key("win32", "AMD64", 64) == "win32-amd64"
    assert guard.platform_key("linux", "x86_64", 64) == "linux-x86_64"
    assert guard.platform_key("linux", "aarch64", 64) == "linux-aarch64"
    assert guard.platform_key("linux", "armv7l", 32) is None
    assert guard.platform_key("linux", "aarch64", 32) is None
    site = tmp_path / "site"
    for d in platform_dirs:
        (site / "_platform" / d).mkdir(parents=True)
    shutil.copy(ROOT / "packaging" / "pyz_hook.py", site / "_robot_md_mcp_pyz.py")
    for key, py, expected in [
        ("darwin-x86_64", (3, 12), ["darwin-x86_64"]),
        ("darwin-arm64", (3, 12), []),
        ("win32-amd64", (3, 13), ["win32-amd64-cp313"]),
        ("linux-aarch64", (3, 10), ["linux-aarch64", "cp310"]),
        ("linux-x86_64", (3, 11), ["linux-x86_64"]),
    ]:
        info = {"platform": key, "dirs": guard.platform_dirs(key, py)}
        code = (
            f"import sys; sys.robot_md_mcp_pyz = {info!r}; sys.path.append({str(site)!r}); "
            f"import _robot_md_mcp_pyz as h; h.activate(); print(sys.path[-{len(expected) + 1}:])"
        )
        out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, check=True)
        assert eval(out.stdout) == [*(str(site / "_platform" / d) for d in expected), str(site)], key


def _record_native(wheel: Path) -> dict[str, str]:
    """{path: sha256 hex} of the native files a wheel's RECORD lists (installed at the site root)."""
    with zipfile.ZipFile(wheel) as z:
        record = next(n for n in z.namelist() if n.endswith(".dist-info/RECORD"))
        found = {}
        for line in z.read(record).decode().splitlines():
            path, digest, _ = line.rsplit(",", 2)
            if path.endswith(NATIVE):
                b64 = digest.split("=", 1)[1]
                found[path] = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4)).hex()
    return found


def test_every_target_sees_exactly_its_extensions(guard, pyz: Path) -> None:
    """macOS and Windows cannot run here: check each (platform, CPython) target's view of the pyz
    against the native files its wheels' RECORDs list, resolving imports as the hook orders them."""
    need(build_pyz is not None, "the `packaging` library")
    z = zipfile.ZipFile(pyz)
    names = set(z.namelist())
    cache = ROOT / ".cache" / "wheels"
    used: set[str] = set()
    for target, wheels in build_pyz.wheels_for_all(cache, None).items():
        plat, py = target
        key_dirs = [*guard.platform_dirs(plat, tuple(map(int, py.split(".")))), ""]
        assert len(wheels) == len(build_pyz.pins_for(target))
        for wheel in wheels:
            name = wheel.name.split("-")[0]
            for path, digest in _record_native(wheel).items():
                if name == "pywin32" and not build_pyz.keep("pywin32", path):
                    continue
                top = path.split("/")[0]
                # The first directory on the target's sys.path holding the top-level name wins.
                where = next(
                    d
                    for d in key_dirs
                    if any(
                        n == (at := f"site-packages/{d}/{top}".replace("//", "/")) or n.startswith(at + "/")
                        for n in names
                    )
                )
                member = f"site-packages/{where}/{path}".replace("//", "/")
                assert member in names, (target, member)
                data = z.read(member)
                if data[:4] == b"\xcf\xfa\xed\xfe" and hashlib.sha256(data).hexdigest() != digest:
                    assert plat == "darwin-x86_64" and data[4:8] == b"\x07\x00\x00\x01"  # thinned universal2
                else:
                    assert hashlib.sha256(data).hexdigest() == digest, (target, member)
                used.add(member)
    native = {n for n in names if n.endswith(NATIVE)}
    assert native == used, sorted(native - used)[:10]  # nothing no target loads


def test_pywin32_keeps_what_mcp_imports(pyz: Path) -> None:
    names = zipfile.ZipFile(pyz).namelist()
    win = [n for n in names if "/_platform/win32-amd64-cp312/" in n]
    for module in (
        "win32/win32api.pyd",
        "win32/win32job.pyd",
        "win32/_win32sysloader.pyd",
        "win32/lib/win32con.py",
        "win32/lib/pywintypes.py",
        "pywin32_system32/pywintypes312.dll",
        "win32/lib/pywin32_bootstrap.py",
        "pywin32.pth",
    ):
        assert any(n.endswith("/win32-amd64-cp312/" + module) for n in win), module
    assert not [
        n for n in names if n.endswith(".pth") and "/win32-amd64" not in n and "_robot_md_mcp_pyz" not in n
    ]
    assert len(win) < 40  # not the ~600 files of the full wheel


# --- unpack cache --------------------------------------------------------------------------------------


def _fake_copy(root: Path, name: str, ours: bool, age_days: float = 0) -> Path:
    copy = root / name
    (copy / "site-packages").mkdir(parents=True)
    if ours:
        (copy / "site-packages" / "_robot_md_mcp_pyz.py").write_text("")
    past = time.time() - age_days * 86400
    os.utime(copy, (past, past))
    return copy


def test_first_run_line_once_and_old_copies_pruned(pyz: Path, tmp_path: Path) -> None:
    root = tmp_path / "shiv"
    root.mkdir()
    old = _fake_copy(root, "robot-md-mcp.pyz_" + "0" * 64, ours=True)
    busy = _fake_copy(root, "robot-md-mcp.pyz_" + "2" * 64, ours=True)
    foreign = _fake_copy(root, "robot-md-mcp.pyz_" + "1" * 64, ours=False)  # no marker: not ours
    kept_renamed = _fake_copy(root, "robot-md-mcp-0.0.9.pyz_" + "3" * 64, ours=True, age_days=2)
    stale_renamed = _fake_copy(root, "robot-md-mcp-0.0.8.pyz_" + "4" * 64, ours=True, age_days=40)
    holder = subprocess.Popen(  # a concurrent process still using `busy`
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT);"
            " fcntl.flock(fd, fcntl.LOCK_SH); print('held', flush=True); time.sleep(60)",
            f"{busy}.in-use",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        env = {**os.environ, "SHIV_ROOT": str(root)}
        first = run(sys.executable, pyz, "--version", env=env)
        second = run(sys.executable, pyz, "--version", env=env)
    finally:
        holder.kill()
        holder.wait()
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    (line,) = first.stderr.splitlines()
    assert line.startswith(f"robot-md-mcp: first run of this build: unpacking to {root}/robot-md-mcp.pyz_")
    assert second.stderr == ""
    assert not old.exists() and not stale_renamed.exists()
    assert busy.exists() and foreign.exists() and kept_renamed.exists()


def _as_nobody() -> list[str]:
    if os.geteuid() != 0:
        return []
    need(shutil.which("setpriv") is not None, "setpriv (to test permissions as an unprivileged user)")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture
def public_pyz(pyz: Path):
    """The pyz in a folder an unprivileged user can read, and a scratch folder they can use."""
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        base.chmod(0o755)
        shutil.copy(pyz, base / "robot-md-mcp.pyz")
        (base / "robot-md-mcp.pyz").chmod(0o644)
        shutil.copy(EXAMPLE, base / "ROBOT.md")
        (base / "ROBOT.md").chmod(0o644)
        yield base


def test_read_only_or_missing_home(public_pyz: Path) -> None:
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    prefix = _as_nobody()
    home = public_pyz / "home"
    home.mkdir(mode=0o555)  # nobody cannot write it (nor, without root, can we)
    tmp = public_pyz / "tmp"
    tmp.mkdir()
    tmp.chmod(0o1777)
    base_env = {"PATH": os.environ["PATH"], "TMPDIR": str(tmp)}
    uid = 65534 if prefix else os.getuid()
    for env in ({**base_env, "HOME": str(home)}, base_env):
        done = subprocess.run(
            [*prefix, python, str(public_pyz / "robot-md-mcp.pyz"), "validate", str(public_pyz / "ROBOT.md")],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert f"unpacking to {tmp}/shiv-{uid}/" in done.stderr or done.stderr == ""
    assert (tmp / f"shiv-{uid}").is_dir()
    # Nowhere writable at all (the temp dir forced read-only): one line naming the variable to set.
    shutil.copy(ROOT / "packaging" / "pyz_guard.py", public_pyz / "guard.py")
    code = (
        "import sys, tempfile; sys.path.insert(0, sys.argv[1]); import guard; tempfile.tempdir = sys.argv[2];"
        " print(guard.unpack_root({'HOME': sys.argv[2]}))"
    )
    done = subprocess.run(
        [*prefix, python, "-c", code, str(public_pyz), str(home)], capture_output=True, text=True, check=True
    )
    root, message = eval(done.stdout)
    assert root is None and "\n" not in message
    assert message.startswith(f"robot-md-mcp: no writable folder to unpack into (tried {home}/.shiv, {home}/")
    assert message.endswith("; set SHIV_ROOT to one")


# --- unpacking on several threads (the guard's extract_site_packages in place of shiv's) ----------


@pytest.fixture
def shiv_bootstrap(pyz: Path, monkeypatch: pytest.MonkeyPatch):
    """shiv's own _bootstrap, imported from the pyz (the guard's unpacking uses its FileLock)."""
    monkeypatch.syspath_prepend(str(pyz))
    import _bootstrap

    return _bootstrap


def _tree(root: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else b"", p.stat().st_mode)
        for p in root.rglob("*")
    }


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_unpack_is_shivs_result(guard, shiv_bootstrap, dist: Path, tmp_path: Path) -> None:
    """Byte for byte and mode for mode what shiv's own extract_site_packages makes."""
    (slim,) = dist.glob(f"robot-md-mcp-*-cp3{sys.version_info[1]}-manylinux_x86_64.pyz")
    with zipfile.ZipFile(slim) as archive:
        shiv_bootstrap.extract_site_packages(archive, tmp_path / "shiv" / "copy")
        guard.extract_site_packages(archive, tmp_path / "ours" / "copy")
        executable = [i for i in archive.infolist() if (i.external_attr >> 16) & 0o111]
    ours, theirs = _tree(tmp_path / "ours" / "copy"), _tree(tmp_path / "shiv" / "copy")
    assert len(ours) > 1000 and ours == theirs
    assert executable and all(
        os.access(tmp_path / "ours" / "copy" / i.filename, os.X_OK) for i in executable
    )  # modes really were restored, not just equal by default
    assert sorted(p.name for p in (tmp_path / "ours").iterdir()) == [".copy_lock", "copy"]  # no .tmp left


def test_unpack_leftovers_and_force(guard, shiv_bootstrap, tmp_path: Path) -> None:
    archive_path = _zip(tmp_path / "a.pyz", {"site-packages/m.py": b"x = 1\n", "site-packages/d/n.txt": b"n"})
    copy = tmp_path / "root" / "copy"
    stale = tmp_path / "root" / "copy.tmp"  # a run killed midway left this
    stale.mkdir(parents=True)
    (stale / "junk").write_text("half")
    with zipfile.ZipFile(archive_path) as archive:
        guard.extract_site_packages(archive, copy)
        assert sorted(_tree(copy)) == [
            "site-packages",
            "site-packages/d",
            "site-packages/d/n.txt",
            "site-packages/m.py",
        ]
        assert not stale.exists()
        (copy / "site-packages" / "m.py").write_text("edited")
        guard.extract_site_packages(archive, copy)  # already there (another run won the lock): untouched
        assert (copy / "site-packages" / "m.py").read_text() == "edited"
        guard.extract_site_packages(archive, copy, force=True)  # SHIV_FORCE_EXTRACT
        assert (copy / "site-packages" / "m.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    ("members", "reason"),
    [
        ({"site-packages/ok.py": b"", "site-packages/../../evil.py": b"x"}, "names a place outside"),
        # a file and a folder of one name: the error depends on which thread comes first
        ({"site-packages/a": b"file", "site-packages/a/b.py": b"x"}, "(Not|Is) a directory|File exists"),
    ],
)
def test_unpack_failure_is_one_line_and_leaves_nothing(
    guard, shiv_bootstrap, tmp_path: Path, members: dict, reason: str
) -> None:
    archive_path = _zip(tmp_path / "bad.pyz", members)
    root = tmp_path / "root"
    with zipfile.ZipFile(archive_path) as archive, pytest.raises(SystemExit) as raised:
        guard.extract_site_packages(archive, root / "copy")
    message = str(raised.value.code)
    assert message.startswith(f"robot-md-mcp: could not unpack to {root / 'copy'}: ") and "\n" not in message
    assert re.search(reason, message)
    assert sorted(p.name for p in root.iterdir()) == [".copy_lock"]
    assert not (tmp_path / "evil.py").exists()


def test_first_run_on_a_full_disk(pyz: Path, tmp_path: Path) -> None:
    """A real first run into a 20 MB tmpfs (the pyz unpacks ~100 MB): one line saying why, exit 1,
    nothing left behind, and the next run with room works."""
    need(os.geteuid() == 0 and shutil.which("mount") is not None, "root (to mount a small tmpfs)")
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(small)], check=True)
    try:
        done = run(sys.executable, pyz, "--version", env={**os.environ, "SHIV_ROOT": str(small)})
        leftovers = sorted(p.name for p in small.iterdir() if not p.name.endswith((".in-use", "_lock")))
    finally:
        subprocess.run(["umount", str(small)], check=True)
    assert done.returncode == 1
    notice, error = done.stderr.splitlines()
    assert notice.startswith("robot-md-mcp: first run of this build: unpacking to ")
    assert error.startswith(f"robot-md-mcp: could not unpack to {small}/robot-md-mcp.pyz_")
    assert error.endswith("No space left on device")
    assert leftovers == []
    assert run(sys.executable, pyz, "--version", env={**os.environ, "SHIV_ROOT": str(small)}).returncode == 0


@posix_only
def test_ctrl_c_while_unpacking(dist: Path, tmp_path: Path) -> None:
    """Ctrl-C during a first run's unpacking: exit 130 without a traceback; the next run unpacks anew."""
    (slim,) = dist.glob(f"robot-md-mcp-*-cp3{sys.version_info[1]}-manylinux_x86_64.pyz")
    env = {**os.environ, "SHIV_ROOT": str(tmp_path)}
    first = subprocess.Popen(
        [sys.executable, str(slim), "--version"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob("*.tmp/site-packages/*")) and time.monotonic() < deadline:
        time.sleep(0.005)
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=60)
    assert first.returncode == 130, err
    assert "Traceback" not in err and out == ""
    assert [p for p in tmp_path.glob("*/site-packages") if not p.parent.name.endswith(".tmp")] == []
    again = run(sys.executable, slim, "--version", env=env)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip().endswith("(pyz, platform linux-x86_64)")


def test_simultaneous_first_runs(dist: Path, tmp_path: Path) -> None:
    """Claude Desktop may start two servers at once on a fresh machine: shiv's lock makes one unpack
    and the other wait; both serve."""
    (slim,) = dist.glob(f"robot-md-mcp-*-cp3{sys.version_info[1]}-manylinux_x86_64.pyz")
    env = {**os.environ, "SHIV_ROOT": str(tmp_path)}
    runs = [
        subprocess.Popen(
            [sys.executable, str(slim), "validate", str(EXAMPLE)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(3)
    ]
    results = [(p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for p in runs]
    for p in runs:
        p.stdout.close()
        p.stderr.close()
    assert [code for code, _, _ in results] == [0, 0, 0], results
    assert len({out for _, out, _ in results}) == 1
    assert [p.name for p in tmp_path.iterdir() if not p.name.endswith((".in-use", "_lock"))] == [
        f"{slim.name}_{json.loads(zipfile.ZipFile(slim).read('environment.json'))['build_id']}"
    ]


# --- the build itself -------------------------------------------------------------------------------


def test_sizes_and_checksums(dist: Path) -> None:
    universal = dist / "robot-md-mcp.pyz"
    assert universal.stat().st_size <= 100e6
    slim = sorted(dist.glob("robot-md-mcp-*.pyz"))
    assert len(slim) == 25
    for path in slim:  # bytecode (where the build had that CPython) adds ~4 MB
        with zipfile.ZipFile(path) as z:
            has_bytecode = any(name.endswith(".pyc") for name in z.namelist())
        assert path.stat().st_size <= (16e6 if has_bytecode else 12e6), path.name
    sums = dict(reversed(line.split("  ")) for line in (dist / "SHA256SUMS").read_text().splitlines())
    assert set(sums) == {p.name for p in [universal, *slim]}
    for name, digest in sums.items():
        assert hashlib.sha256((dist / name).read_bytes()).hexdigest() == digest, name


def test_slim_pyz_runs(dist: Path, tmp_path: Path) -> None:
    (slim,) = dist.glob(f"robot-md-mcp-*-cp3{sys.version_info[1]}-manylinux_x86_64.pyz")
    env = {**os.environ, "SHIV_ROOT": str(tmp_path)}
    assert (
        run(sys.executable, slim, "--version", env=env)
        .stdout.strip()
        .endswith("(pyz, platform linux-x86_64)")
    )
    others = [p for p in PYENV.glob("3.1[0-3]*/bin/python") if f"3.{sys.version_info[1]}." not in str(p)]
    need(bool(others), "a second CPython 3.10-3.13 (pyenv)")
    other = others[0]
    done = run(str(other), slim, "--version", env=env)
    assert done.returncode == 1 and f"needs 64-bit CPython 3.{sys.version_info[1]} on Linux" in done.stderr


def test_slim_pyz_brings_its_bytecode(dist: Path, tmp_path: Path) -> None:
    """The slim pyz for this CPython carries compiled modules: its first run only unpacks
    (nothing to compile, nothing written beside them), and imports load them."""
    (slim,) = dist.glob(f"robot-md-mcp-*-cp3{sys.version_info[1]}-manylinux_x86_64.pyz")
    tag = sys.implementation.cache_tag
    with zipfile.ZipFile(slim) as z:
        shipped = {n for n in z.namelist() if n.endswith(".pyc")}
    assert f"site-packages/mcp/__pycache__/__init__.{tag}.pyc" in shipped
    assert all(f".{tag}.pyc" in n for n in shipped)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["SHIV_ROOT"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-v", str(slim), "validate", str(EXAMPLE)], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(rf"code object from '[^']*yaml/__pycache__/__init__\.{tag}\.pyc'", done.stderr)
    unpacked = {
        p.relative_to(next(tmp_path.glob("*/site-packages")).parent).as_posix()
        for p in tmp_path.glob("*/site-packages/**/*.pyc")
    }
    assert unpacked == shipped  # none compiled on the way


def test_reproducible(dist: Path, tmp_path: Path) -> None:
    seconds = build(tmp_path)  # the wheels are cached now: this is the warm build time
    print(f"warm build: {seconds:.0f} s")
    assert (tmp_path / "SHA256SUMS").read_text() == (dist / "SHA256SUMS").read_text()
