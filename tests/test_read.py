"""Section 1: finding and reading the manifest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import posix_only

import robot_md_mcp as rmm


def test_where_the_manifest_is_found(tmp_path: Path) -> None:
    """PATH (a folder means its ROBOT.md; relative to the working folder), else $ROBOT_MD_PATH, else
    the nearest ROBOT.md from the working folder up."""
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "ROBOT.md").write_text("---\n")
    env = {"ROBOT_MD_PATH": str(tmp_path / "env.md")}
    assert rmm.resolve_manifest_path(str(tmp_path), {}, Path("/")) == tmp_path / "ROBOT.md"
    assert rmm.resolve_manifest_path("x/ROBOT.md", env, tmp_path) == tmp_path / "x" / "ROBOT.md"
    assert rmm.resolve_manifest_path(None, env, Path("/")) == tmp_path / "env.md"
    assert rmm.resolve_manifest_path(None, {}, deep) == tmp_path / "ROBOT.md"
    (tmp_path / "a" / "ROBOT.md").write_text("---\n")
    assert rmm.resolve_manifest_path(None, {}, deep) == tmp_path / "a" / "ROBOT.md"


def test_no_manifest_is_one_line_saying_where(tmp_path: Path) -> None:
    with pytest.raises(rmm.ManifestError) as e:
        rmm.resolve_manifest_path(str(tmp_path), {}, Path("/"))
    assert e.value.one_line() == f"robot-md-mcp: no ROBOT.md in this directory ({tmp_path})"
    assert not isinstance(e.value, rmm.NoManifestFound)
    with pytest.raises(rmm.NoManifestFound) as searched:
        rmm.resolve_manifest_path(None, {}, tmp_path)
    line = searched.value.one_line()
    assert str(tmp_path) in line and "ROBOT_MD_PATH" in line  # the command line adds how to pass one
    assert "\n" not in line


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root reads any file, so the permission error is injected where it arises.
    p = tmp_path / "ROBOT.md"
    p.write_text("---\n")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(rmm, "open", denied, raising=False)
    with pytest.raises(rmm.ManifestError) as e:
        rmm.read_source(p)
    assert e.value.one_line() == f"robot-md-mcp: cannot read: permission denied ({p})"


def test_size_limit(tmp_path: Path) -> None:
    p = tmp_path / "ROBOT.md"
    p.write_bytes(b"-" * (rmm.MAX_MANIFEST_BYTES + 1))
    with pytest.raises(rmm.ManifestError, match="larger than the 1024 KiB limit"):
        rmm.read_source(p)
    p.write_bytes(b"x" * rmm.MAX_MANIFEST_BYTES)
    assert len(rmm.read_source(p).text) == rmm.MAX_MANIFEST_BYTES


def test_decode_normalises_newlines_drops_a_leading_bom_and_refuses_non_utf8_clearly() -> None:
    assert rmm.decode(b"\xef\xbb\xbfa\r\nb\rc\n").text == "a\nb\nc\n"
    assert rmm.decode(b"a\xef\xbb\xbf").text == "a\ufeff"  # only a leading BOM is dropped
    # The digest follows the bytes, not the text.
    assert rmm.decode(b"a\n").digest == "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"
    assert rmm.decode(b"a\n").digest != rmm.decode(b"a\r\n").digest
    with pytest.raises(rmm.ManifestError) as e:
        rmm.decode(b"---\nname: caf\xe9\n", "x.md")
    assert e.value.one_line() == (
        "robot-md-mcp: not UTF-8 text (byte 0xe9 at offset 13); save the file as UTF-8 (x.md)"
    )


def test_one_line_folds_multiline_messages() -> None:
    e = rmm.ManifestError("while parsing\n  in line 4\nexpected ']'", "/r.md")
    assert e.one_line() == "robot-md-mcp: while parsing in line 4 expected ']' (/r.md)"


# --- the served file: fresh on every request -------------------------------------------------

V1 = "---\nmetadata: {robot_name: bob, version: '1'}\n---\n# bob\n"
V2 = V1.replace("'1'", "'2'")  # the same size: neither size nor (below) mtime tells them apart


def _version(mf: rmm.ManifestFile) -> str:
    return mf.version().manifest.frontmatter["metadata"]["version"]


def _rewrite_in_place_keeping_mtime(path: Path) -> None:
    before = path.stat()
    path.write_text(V2, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `cp -p` or rsync -t would


def _replace_by_rename_keeping_mtime(path: Path) -> None:
    before = path.stat()
    new = path.with_suffix(".new")
    new.write_text(V2, encoding="utf-8")
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(new, path)  # how editors save


def _retarget(link: Path) -> None:
    link.unlink()
    link.symlink_to("b.md")


EDITS = {
    "rewritten in place, mtime kept": _rewrite_in_place_keeping_mtime,
    "replaced by rename, mtime kept": _replace_by_rename_keeping_mtime,
    "symlink retargeted": _retarget,
    "deleted": Path.unlink,
}


@pytest.mark.parametrize(
    "edit", [pytest.param(e, marks=[posix_only] * (e == "symlink retargeted")) for e in EDITS]
)
def test_an_edit_shows_on_the_next_request(tmp_path: Path, edit: str) -> None:
    (tmp_path / "a.md").write_text(V1, encoding="utf-8")
    (tmp_path / "b.md").write_text(V2, encoding="utf-8")
    path = tmp_path / "ROBOT.md"
    if edit == "symlink retargeted":
        path.symlink_to("a.md")
    else:
        path.write_text(V1, encoding="utf-8")
    mf = rmm.ManifestFile(path)
    assert [_version(mf), _version(mf)] == ["1", "1"]
    EDITS[edit](path)
    if edit == "deleted":
        with pytest.raises(rmm.ManifestError, match="file not found"):
            mf.version()
    else:
        assert _version(mf) == "2"
