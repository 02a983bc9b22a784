"""A FUSE file system serving one file, ROBOT.md, whose reads stall: while the
flag file exists, read() blocks (each stall ending by itself after a bound),
as sshfs or NFS do when the network stops answering. Test-only (fusepy,
libfuse2, root): tests/test_stall.py mounts it.

    python tests/support/stalling_fs.py MOUNTPOINT BACKING_FILE FLAG_FILE MAX_STALL_SECONDS
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
from typing import Any

import fuse  # type: ignore[import-not-found, import-untyped, unused-ignore]

NAME = "/ROBOT.md"


class StallingFile(fuse.Operations):  # type: ignore[misc]
    def __init__(self, backing: str, flag: str, max_stall: float) -> None:
        self.backing, self.flag, self.max_stall = backing, flag, max_stall

    def getattr(self, path: str, fh: Any = None) -> dict[str, Any]:
        now = time.time()
        if path == "/":
            return {"st_mode": stat.S_IFDIR | 0o755, "st_nlink": 2, "st_mtime": now}
        if path != NAME:
            raise fuse.FuseOSError(errno.ENOENT)
        size = os.path.getsize(self.backing)
        return {"st_mode": stat.S_IFREG | 0o444, "st_nlink": 1, "st_size": size, "st_mtime": now}

    def readdir(self, path: str, fh: Any) -> list[str]:
        return [".", "..", NAME[1:]]

    def open(self, path: str, flags: int) -> int:
        if path != NAME:
            raise fuse.FuseOSError(errno.ENOENT)
        return 0

    def read(self, path: str, size: int, offset: int, fh: Any) -> bytes:
        ends = time.monotonic() + self.max_stall
        while os.path.exists(self.flag) and time.monotonic() < ends:
            time.sleep(0.01)
        with open(self.backing, "rb") as f:
            f.seek(offset)
            return f.read(size)


if __name__ == "__main__":
    mountpoint, backing, flag, max_stall = sys.argv[1:5]
    # direct_io: every read reaches read() above (no page cache to answer it instead)
    fuse.FUSE(StallingFile(backing, flag, float(max_stall)), mountpoint, foreground=True, direct_io=True)
