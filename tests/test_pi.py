"""The universal pyz and the Pi's slim one (cp311 manylinux_aarch64, with its
bytecode) on a Raspberry Pi: Debian bookworm arm64 with its own python3.11, run
under qemu-user from ../shared/tools/pi-emu (.ci/run builds the userland once
per machine). Slow: emulation is ~10x slower than the host."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXAMPLE, ROOT, need
from serving import launched_session

pytestmark = pytest.mark.heavy  # builds the pyz and runs it under qemu from ../shared/tools/pi-emu

PI_EMU = ROOT.parent / "shared" / "tools" / "pi-emu"
ROOTFS = Path(os.environ.get("PI_EMU_ROOT", "/var/tmp/pi-emu")) / "rootfs-arm64"


def on_the_pi(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    # run_in_arm64.sh bind-mounts the current folder at the same path; /tmp inside is a fresh tmpfs.
    return subprocess.run(
        ["bash", str(PI_EMU / "run_in_arm64.sh"), *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.parametrize("kind", ["universal", "slim"])
def test_full_session_on_an_emulated_pi(kind: str, built_dist: Path) -> None:
    need(sys.platform == "linux" and os.geteuid() == 0, "root on Linux (the emulator chroots)")
    need((PI_EMU / "run_in_arm64.sh").exists(), f"the Pi emulator scripts in {PI_EMU}")
    need(
        (ROOTFS / "etc" / "rootfs-built-by-make_rootfs").exists(),
        f"the arm64 userland at {ROOTFS}: sudo {PI_EMU}/make_rootfs.sh arm64",
    )
    stage = ROOT / ".cache" / "pi"
    stage.mkdir(parents=True, exist_ok=True)
    if kind == "universal":
        built = built_dist / "robot-md-mcp.pyz"
    else:
        (built,) = built_dist.glob("robot-md-mcp-*-cp311-manylinux_aarch64.pyz")
    pyz = stage / built.name
    shutil.copyfile(built, pyz)
    manifest = stage / "ROBOT.md"
    shutil.copyfile(EXAMPLE, manifest)

    machine = on_the_pi(
        "python3", "-c", "import platform, sys; print(platform.machine(), sys.version_info[:2])"
    )
    assert machine.stdout.strip() == "aarch64 (3, 11)", machine.stderr

    version = on_the_pi("python3", str(pyz), "--version")
    assert version.returncode == 0, version.stderr
    assert "linux-aarch64" in version.stdout

    session = launched_session("bash", PI_EMU / "run_in_arm64.sh", "python3", pyz, manifest, timeout=600)
    assert session.startswith("ok: "), session
