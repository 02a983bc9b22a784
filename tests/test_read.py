"""Section 1: finding and reading the manifest."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import posix_only

import robot_md_mcp as rmm


def test_directory_means_its_robot_md(tmp_path: Path) -> None:
    (tmp_path / "ROBOT.md").write_text("---\n")
    assert rmm.resolve_manifest_path(str(tmp_path), {}, Path("/")) == tmp_path / "ROBOT.md"


def test_directory_without_manifest_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(rmm.ManifestError) as e:
        rmm.resolve_manifest_path(str(tmp_path), {}, Path("/"))
    assert e.value.one_line() == f"robot-md-mcp: no ROBOT.md in this directory ({tmp_path})"
    assert not isinstance(e.value, rmm.NoManifestFound)


def test_relative_path_is_made_absolute(tmp_path: Path) -> None:
    assert rmm.resolve_manifest_path("x/ROBOT.md", {}, tmp_path) == tmp_path / "x" / "ROBOT.md"


def test_env_var_is_used_when_no_argument(tmp_path: Path) -> None:
    env = {"ROBOT_MD_PATH": str(tmp_path / "a.md")}
    assert rmm.resolve_manifest_path(None, env, Path("/")) == tmp_path / "a.md"
    # An explicit argument wins over the environment.
    assert rmm.resolve_manifest_path("/b.md", env, Path("/")) == Path(os.path.abspath("/b.md"))


def test_walks_up_to_the_nearest_manifest(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "ROBOT.md").write_text("---\n")
    assert rmm.resolve_manifest_path(None, {}, deep) == tmp_path / "ROBOT.md"
    (tmp_path / "a" / "ROBOT.md").write_text("---\n")
    assert rmm.resolve_manifest_path(None, {}, deep) == tmp_path / "a" / "ROBOT.md"


def test_nothing_found_says_what_was_searched(tmp_path: Path) -> None:
    with pytest.raises(rmm.NoManifestFound) as e:
        rmm.resolve_manifest_path(None, {}, tmp_path)
    line = e.value.one_line()
    assert str(tmp_path) in line and "ROBOT_MD_PATH" in line  # the command line adds how to pass one
    assert "\n" not in line


@posix_only
def test_read_errors_are_words_not_tracebacks(tmp_path: Path) -> None:
    with pytest.raises(rmm.ManifestError, match="file not found"):
        rmm.read_source(tmp_path / "missing.md")
    with pytest.raises(rmm.ManifestError, match=r"no ROBOT\.md in this directory"):
        rmm.read_source(tmp_path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(rmm.ManifestError, match="not a regular file"):
        rmm.read_source(fifo)  # must not block
    with pytest.raises(rmm.ManifestError, match="not a regular file"):
        rmm.read_source(Path("/dev/zero"))
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(rmm.ManifestError, match="cannot read: too many levels of symbolic links"):
        rmm.read_source(tmp_path / "a")


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


def test_decode_normalises_newlines_and_bom() -> None:
    assert rmm.decode(b"\xef\xbb\xbfa\r\nb\rc\n").text == "a\nb\nc\n"
    # Only a leading BOM is dropped.
    assert rmm.decode(b"a\xef\xbb\xbf").text == "a\ufeff"


def test_decode_rejects_non_utf8_clearly() -> None:
    with pytest.raises(rmm.ManifestError) as e:
        rmm.decode(b"---\nname: caf\xe9\n", "x.md")
    assert e.value.one_line() == (
        "robot-md-mcp: not UTF-8 text (byte 0xe9 at offset 13); save the file as UTF-8 (x.md)"
    )


def test_digest_follows_bytes() -> None:
    assert rmm.decode(b"a\n").digest == "87428fc522803d31065e7bce3cf03fe475096631e5e07bbd7a0fde60c4cf25c7"
    assert rmm.decode(b"a\n").digest != rmm.decode(b"a\r\n").digest


def test_one_line_folds_multiline_messages() -> None:
    e = rmm.ManifestError("while parsing\n  in line 4\nexpected ']'", "/r.md")
    assert e.one_line() == "robot-md-mcp: while parsing in line 4 expected ']' (/r.md)"


# --- the served file: fresh on every request -------------------------------------------------

V1 = "---\nmetadata: {robot_name: bob, version: '1'}\n---\n# bob\n"
V2 = V1.replace("'1'", "'2'")  # the same size: neither size nor (below) mtime tells them apart


def _written(tmp_path: Path, text: str = V1) -> Path:
    path = tmp_path / "ROBOT.md"
    path.write_text(text, encoding="utf-8")
    return path


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


@pytest.mark.parametrize("edit", [_rewrite_in_place_keeping_mtime, _replace_by_rename_keeping_mtime])
def test_a_same_size_edit_with_the_old_mtime_shows_on_the_next_request(tmp_path, edit) -> None:
    path = _written(tmp_path)
    mf = rmm.ManifestFile(path)
    assert _version(mf) == "1" and _version(mf) == "1"
    edit(path)
    assert _version(mf) == "2"


@posix_only
def test_a_retargeted_symlink_shows_on_the_next_request(tmp_path) -> None:
    (tmp_path / "a.md").write_text(V1, encoding="utf-8")
    (tmp_path / "b.md").write_text(V2, encoding="utf-8")
    link = tmp_path / "ROBOT.md"
    link.symlink_to("a.md")
    mf = rmm.ManifestFile(link)
    assert _version(mf) == "1" and _version(mf) == "1"
    link.unlink()
    link.symlink_to("b.md")
    assert _version(mf) == "2"


def test_a_deleted_file_is_an_error_on_the_next_request(tmp_path) -> None:
    path = _written(tmp_path)
    mf = rmm.ManifestFile(path)
    assert _version(mf) == "1" and _version(mf) == "1"
    path.unlink()
    with pytest.raises(rmm.ManifestError, match="file not found"):
        mf.version()
