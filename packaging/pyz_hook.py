"""Platform directories of the robot-md-mcp pyz (installed as _robot_md_mcp_pyz.py at the root of
the pyz's site-packages, run by _robot_md_mcp_pyz.pth when shiv's bootstrap calls site.addsitedir).

One site-packages tree serves every platform: files that differ between platforms or CPythons under
the same path (macOS arm64 vs x86_64 `.so`, cryptography's abi3 module, pywin32's unversioned `.pyd`,
pure packages that 3.10 needs older) live in `_platform/<dir>/`. The pyz's __main__ (the guard) has
already checked the interpreter and recorded, in sys.robot_md_mcp_pyz["dirs"], which of those
directories this interpreter may use, most specific first. This puts the existing ones ahead of the
shared tree (running their own .pth files, e.g. pywin32's), so their packages win imports."""

import os
import site
import sys


def activate():
    info = getattr(sys, "robot_md_mcp_pyz", None)
    if info is None:  # not started through the pyz's __main__: nothing was checked, change nothing
        return
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [os.path.join(here, *d.split("/")) for d in info["dirs"]]
    info["used"] = [d for d in info["dirs"] if os.path.isdir(os.path.join(here, *d.split("/")))]
    before = list(sys.path)
    for path in dirs:
        if os.path.isdir(path):
            site.addsitedir(path)
    added = sys.path[len(before) :]
    # shiv's bootstrap appended `here` and later moves everything after its own starting length
    # ahead of the system site-packages, so keeping our dirs just before `here` keeps them first.
    at = before.index(here) if here in before else len(before)
    sys.path[:] = before[:at] + added + before[at:]
