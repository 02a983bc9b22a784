"""Signatures, offline: the ROBOT-MD-SIG footer checked as robot-md-gateway checks
it, against keys the tests make. Files are signed the way robot-md's
manifest_sig.signed_manifest_text does (its footer pattern, its pre-image)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLE, ROOT, need
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.types import TextContent, TextResourceContents
from serving import in_process

import robot_md_mcp as rmm

GOOD = EXAMPLE.read_text(encoding="utf-8")
# robot-md's footer pattern (manifest_sig._SIG_RE), copied so the tests do not take ours on trust.
FOOTER = re.compile(r"\n<!--\s*ROBOT-MD-SIG\s+kid=(?P<kid>\S+)\s+sig=(?P<sig>[A-Za-z0-9+/=]+)\s*-->\s*\Z")


def footer(signed: str) -> re.Match[str]:
    """The signature footer of a text that has one."""
    found = FOOTER.search(signed)
    assert found is not None, signed[-200:]
    return found


def text_of(item: object) -> str:
    """The text of a tool's content block or a resource's contents (never a blob here)."""
    assert isinstance(item, (TextContent, TextResourceContents)), item
    return item.text


def sign(text: str, key: ed25519.Ed25519PrivateKey, kid: str) -> str:
    """robot-md's signed_manifest_text: strip an old footer, drop trailing newlines, sign, append."""
    match = FOOTER.search(text)
    body = (text[: match.start()] if match else text).rstrip("\n")
    sig = base64.b64encode(key.sign(body.encode("utf-8"))).decode()
    return f"{body}\n<!-- ROBOT-MD-SIG kid={kid} sig={sig} -->\n"


def pem(key) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def fingerprint(key) -> str:
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256:" + hashlib.sha256(der).hexdigest()


OPERATOR = ed25519.Ed25519PrivateKey.generate()
STRANGER = ed25519.Ed25519PrivateKey.generate()


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """Folders and keys made here as `umask 022` makes them, whatever this shell's umask: under 002 they
    would be group-writable, which load_trusted_keys refuses."""
    before = os.umask(0o022)
    yield
    os.umask(before)


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    folder = tmp_path / "trusted"
    folder.mkdir()
    (folder / "op-1.pem").write_bytes(pem(OPERATOR))
    (folder / "ec-key.pem").write_bytes(pem(ec.generate_private_key(ec.SECP256R1())))
    (folder / "broken.pem").write_bytes(b"-----BEGIN PUBLIC KEY-----\nnot a key\n-----END PUBLIC KEY-----\n")
    return folder


def served(tmp_path: Path, data: bytes, keys: Path | None) -> rmm.Snapshot:
    """The file as the server reads it: a ManifestFile with these trusted keys."""
    path = tmp_path / "ROBOT.md"
    path.write_bytes(data)
    return rmm.ManifestFile(path, rmm.load_trusted_keys(str(keys)) if keys else None).version()


def verdict(tmp_path: Path, data: bytes | str, keys: Path | None) -> rmm.Signature:
    signature = served(tmp_path, data.encode() if isinstance(data, str) else data, keys).manifest.signature
    assert signature is not None
    return signature


SIGNED = sign(GOOD, OPERATOR, "op-1")
SIG = footer(SIGNED)["sig"]
_CRLF = GOOD.replace("\n", "\r\n").rstrip("\r\n")
_RAW_SIG = base64.b64encode(OPERATOR.sign(_CRLF.encode())).decode()
_BOM = sign("\ufeff" + GOOD, OPERATOR, "op-1")
NOT_VERIFIED = "signature did not verify against the body"
NOT_ED25519 = "public key is not Ed25519"
# Each text (as signed by robot-md and then changed) and what the gateway says: (accepted, reason, signed),
# None where the words are the crypto library's; the heavy tier asks robot-md-gateway itself of every one.
VERDICTS: dict[str, tuple[str, tuple[bool, str, bool] | None]] = {
    "unsigned": (GOOD, (False, rmm.NO_SIGNATURE, False)),
    "signed by a trusted key": (SIGNED, (True, "ok", True)),
    "tampered body": (SIGNED.replace("payload_kg: 0.5", "payload_kg: 5.0"), (False, NOT_VERIFIED, True)),
    "a flipped signature byte": (
        SIGNED.replace(SIG, SIG.replace(SIG[5], "A" if SIG[5] != "A" else "B", 1)),
        (False, NOT_VERIFIED, True),
    ),
    "the kid of an EC key": (SIGNED.replace("kid=op-1", "kid=ec-key"), (False, NOT_ED25519, True)),
    "an EC key": (sign(GOOD, OPERATOR, "ec-key"), (False, NOT_ED25519, True)),
    "30 bytes of valid base64": (SIGNED.replace(SIG, SIG[:40]), (False, NOT_VERIFIED, True)),
    "unpadded base64 (the gateway raises)": (
        SIGNED.replace(SIG, SIG[:41]),
        (False, "signature is not valid base64", True),
    ),
    # The gateway reads with universal newlines: signed, then saved with CRLF or CR, still verifies.
    "saved with CRLF": (SIGNED.replace("\n", "\r\n"), (True, "ok", True)),
    "saved with CR": (SIGNED.replace("\n", "\r"), (True, "ok", True)),
    "signed over raw CRLF bytes": (
        f"{_CRLF}\r\n<!-- ROBOT-MD-SIG kid=op-1 sig={_RAW_SIG} -->\r\n",
        (False, NOT_VERIFIED, True),
    ),
    "a footer not at the end": (SIGNED + "\nOne more line.\n", (False, rmm.NO_SIGNATURE, False)),
    "trailing whitespace": (SIGNED + "\n \t\n\n", (True, "ok", True)),
    "no final newline": (SIGNED.rstrip("\n"), (True, "ok", True)),
    # read_text() keeps a BOM, so the signer signed it and the gateway checks it.
    "a BOM signed": (_BOM, (True, "ok", True)),
    "a BOM dropped": (_BOM[1:], (False, NOT_VERIFIED, True)),
    "an unknown kid": (
        sign(GOOD, STRANGER, "op-2"),
        (False, "signing kid op-2 not registered with resolver", True),
    ),
    "a kid that is a path": (
        sign(GOOD, OPERATOR, "../outside"),
        (False, "signing kid ../outside not registered with resolver", True),
    ),
    "a broken PEM": (sign(GOOD, OPERATOR, "broken"), None),
    "two footers": (
        sign(SIGNED + "\n", OPERATOR, "op-1").replace("\n<!-- ROBOT", "\n\n<!-- ROBOT", 1),
        (False, NOT_VERIFIED, True),
    ),
}


@pytest.mark.parametrize("case", [case for case, (_, expected) in VERDICTS.items() if expected])
def test_the_verdict_is_the_gateways(case: str, tmp_path, keys) -> None:
    text, expected = VERDICTS[case]
    got = verdict(tmp_path, text, keys)
    assert (got.accepted, got.reason, got.signed) == expected
    if got.signed and "EC key" not in case and "base64" not in case and "kid" not in case:
        assert got.fingerprint == fingerprint(OPERATOR) and got.trusted_keys == 3  # how many, never where


def test_what_the_gateway_would_say(tmp_path, keys) -> None:
    stranger = VERDICTS["an unknown kid"][0]
    assert verdict(tmp_path, stranger, None).reason == "signing kid op-2 not registered with resolver"
    assert rmm.gateway_verdict(verdict(tmp_path, GOOD, keys)) == f"refuses ({rmm.NO_SIGNATURE})"
    unknown = rmm.gateway_verdict(verdict(tmp_path, stranger, keys))
    assert unknown == 'refuses (signing kid "op-2" not registered with resolver)'
    without_keys = rmm.gateway_verdict(verdict(tmp_path, stranger, None))
    assert without_keys.startswith('cannot tell (signed by kid "op-2"; no trusted keys')
    ec_key = verdict(tmp_path, sign(GOOD, OPERATOR, "ec-key"), keys)
    assert ec_key.fingerprint and ec_key.fingerprint.startswith("sha256:")
    broken = verdict(tmp_path, sign(GOOD, OPERATOR, "broken"), keys)
    assert broken.reason.startswith("public key PEM invalid: ") and "\n" not in broken.reason


def test_a_kid_cannot_reach_outside_the_folder(tmp_path, keys) -> None:
    """Keys are files named <kid>.pem inside the folder; a kid is never a path."""
    (tmp_path / "outside.pem").write_bytes(pem(OPERATOR))
    (keys / "sub").mkdir()
    (keys / "sub" / "inner.pem").write_bytes(pem(OPERATOR))
    (keys / ".hidden.pem").write_bytes(pem(OPERATOR))
    for kid in ("../outside", "sub/inner", ".hidden", "/etc/ssl/x", "..", "op-1/../op-1", "sub\\inner"):
        got = verdict(tmp_path, sign(GOOD, OPERATOR, kid), keys)
        assert (got.accepted, got.reason) == (False, f"signing kid {kid} not registered with resolver"), kid
    assert set(rmm.load_trusted_keys(str(keys)).pems) == {"op-1", "ec-key", "broken"}


@settings(max_examples=60, deadline=None)
@given(
    prose=st.text(st.characters(exclude_categories=["Cs"]), max_size=200),
    cut=st.integers(min_value=0),
)
def test_any_signed_text_verifies_and_any_changed_byte_does_not(prose: str, cut: int) -> None:
    """For every text robot-md could sign (whatever its newlines), the check accepts the signed text
    and rejects it once one character before the footer changes."""
    keys = rmm.TrustedKeys("keys", {"op-1": pem(OPERATOR)})
    text = sign("---\nmetadata: {robot_name: b}\n---\n" + prose, OPERATOR, "op-1")
    # What the gateway sees is the text after universal newlines.
    seen = text.replace("\r\n", "\n").replace("\r", "\n")
    seen_footer = FOOTER.search(seen)
    expected = seen_footer is not None and seen[: seen_footer.start()] == text[: footer(text).start()]
    assert rmm.check_signature(seen, keys).accepted == expected
    body_end = seen_footer.start() if seen_footer else len(seen)
    i = cut % max(body_end, 1)
    changed = seen[:i] + ("x" if seen[i : i + 1] != "x" else "y") + seen[i + 1 :]
    assert not rmm.check_signature(changed, keys).accepted


# --- over MCP -----------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_verify_tool_and_signature_resource_in_process(manifest_path, keys, mode) -> None:
    path = manifest_path(sign(GOOD, OPERATOR, "op-1"))
    async with in_process(path, mode, keys=rmm.load_trusted_keys(str(keys))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        schema = tools["verify"].output_schema
        assert schema is not None and schema["required"] == ["accepted", "kid", "reason", "fingerprint"]
        result = await client.call_tool("verify", {})
        expected = {"accepted": True, "kid": "op-1", "reason": "ok", "fingerprint": fingerprint(OPERATOR)}
        assert result.structured_content == expected and json.loads(text_of(result.content[0])) == expected
        resource = json.loads(text_of((await client.read_resource("robot-md://bob/signature")).contents[0]))
        assert resource == {**expected, "signed": True, "trusted_keys": 3}
        assert str(keys) not in json.dumps(resource)
        identity = text_of((await client.read_resource("robot-md://bob/identity")).contents[0])
        assert identity.endswith(
            ' | gateway: accepts (signed by kid "op-1", verified against the trusted keys)'
        )
        context = text_of((await client.read_resource("robot-md://bob/context")).contents[0])
        signed = '## Signature\n\n- Signed: yes, by kid "op-1"\n'
        assert (
            signed + "- robot-md-gateway (it actuates only a signed file it can verify): accepts" in context
        )
        body = text_of((await client.read_resource("robot-md://bob/body")).contents[0])
        assert body == sign(GOOD, OPERATOR, "op-1").split("\n---\n", 2)[1]  # verbatim, its footer kept
        path.write_text(sign(GOOD, OPERATOR, "op-1") + "A line after the footer.\n", encoding="utf-8")
        after = await client.call_tool("verify", {})
        assert after.structured_content["reason"] == rmm.NO_SIGNATURE


def test_trusted_keys_on_the_command_line(tmp_path, manifest_path, capsys) -> None:
    path = manifest_path(GOOD)
    assert rmm.parse_command_line([str(path), "--trusted-keys", "k"]).trusted_keys == "k"
    nope = str(tmp_path / "nope")
    assert rmm.main([str(path), "--trusted-keys", nope], rmm.Machine(environ={})) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trusted keys: cannot read the folder" in err
    assert rmm.main([str(path)], rmm.Machine(environ={rmm.TRUSTED_KEYS_ENV: nope})) == 1  # or from $…
    assert capsys.readouterr().err == err
    elsewhere = {rmm.TRUSTED_KEYS_ENV: str(tmp_path / "elsewhere")}  # the flag wins over $…
    assert rmm.main([str(path), "--trusted-keys", nope], rmm.Machine(environ=elsewhere)) == 1
    assert capsys.readouterr().err == err  # the error names the folder it could not read
    if os.name != "nt":
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o775)
        shared.chmod(0o775)
        assert rmm.main([str(path), "--trusted-keys", str(shared)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "trusted keys: the folder can be changed by other users" in err
    assert rmm.main(["validate", str(path), "--trusted-keys", "k"]) == 2  # serving only


# --- whose keys: the folder and each key ours (or root's), changed by no one else (T-KEYS-1) ---------

ANOTHER_UID = 54321  # a user of no account here: chown to it needs root


def _made(base: Path, how: dict) -> Path:
    """A trusted-keys folder with one key, op-1.pem, as `how` says; the path to give the server."""
    real = base / "real"
    real.mkdir()
    key = base / "elsewhere.pem" if how["key_by_link"] else real / "op-1.pem"
    key.write_bytes(pem(OPERATOR))
    if how["key_by_link"]:  # a link in the folder to a key outside it
        (real / "op-1.pem").symlink_to(key)
    (real / "notes.txt").write_bytes(b"not a key")  # not read: nothing to check
    for path, owner in ((key, how["key_owner"]), (real, how["folder_owner"])):
        if owner != "ours":
            os.chown(path, ANOTHER_UID, -1)
    key.chmod(0o600 | how["key_mode"])
    real.chmod(0o700 | how["folder_mode"] | (stat.S_ISVTX if how["sticky"] else 0))
    if not how["folder_by_link"]:
        return real
    (base / "given").symlink_to(real, target_is_directory=True)
    return base / "given"


def _refusal(how: dict) -> str | None:
    """What the server must say of such a folder (the folder first, then the key), or None: trusted."""
    for what, owner, mode in (
        ("the folder", how["folder_owner"], how["folder_mode"]),
        ("the key op-1.pem", how["key_owner"], how["key_mode"]),
    ):
        if owner != "ours":
            return f"trusted keys: {what} belongs to another user (uid {ANOTHER_UID})"
        if mode & 0o022:
            return f"trusted keys: {what} can be changed by other users"
    return None


@pytest.mark.skipif(os.name == "nt", reason="POSIX owners and modes (on Windows not checked: documented)")
@pytest.mark.parametrize("owners", [("ours",), ("ours", "another user")], ids=["ours", "another-user"])
@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_a_key_folder_or_key_others_could_change_is_refused(
    tmp_path_factory: pytest.TempPathFactory, owners: tuple[str, ...], data: st.DataObject
) -> None:
    """Any mode (group and others' bits, sticky or not) and owner of the folder and of a key, each given
    directly or by a link: trusted only if both are ours (or root's) and writable by no one else; else
    the server does not start, and says which and why in one line. A link given as the folder, and a .pem
    that is a link out of it (only we could have put it there), are followed, and what they lead to is
    checked."""
    if "another user" in owners:
        need(os.geteuid() == 0, "a file another user owns: chown needs root (CI runs as root)")
    how = {
        "folder_mode": data.draw(st.integers(0, 0o77), "folder_mode"),
        "sticky": data.draw(st.booleans(), "sticky"),
        "folder_owner": data.draw(st.sampled_from(owners), "folder_owner"),
        "key_mode": data.draw(st.integers(0, 0o77), "key_mode"),
        "key_owner": data.draw(st.sampled_from(owners), "key_owner"),
        "folder_by_link": data.draw(st.booleans(), "folder_by_link"),
        "key_by_link": data.draw(st.booleans(), "key_by_link"),
    }
    given_path = _made(tmp_path_factory.mktemp("keys"), how)
    refusal = _refusal(how)
    if refusal is None:
        assert set(rmm.load_trusted_keys(str(given_path)).pems) == {"op-1"}
        return
    with pytest.raises(rmm.ManifestError) as refused:
        rmm.load_trusted_keys(str(given_path))
    line = refused.value.one_line()
    assert refusal in line and "\n" not in line, (line, how)


# --- against robot-md-gateway's own checker (heavy: installs it from PyPI) -----------------

GATEWAY_PIN = "robot-md-gateway==0.5.0a9"  # pre-releases only on PyPI; this function needs only cryptography


@pytest.fixture(scope="module")
def gateway_check():
    """robot_md_gateway.manifest_provenance.verify_manifest, installed without dependencies into .cache/."""
    import importlib.util
    import subprocess

    folder = ROOT / ".cache" / GATEWAY_PIN.replace("==", "-")
    module = folder / "robot_md_gateway" / "manifest_provenance.py"
    if not module.exists():
        pip = ["pip", "install", "-q", "--no-deps", "--target", str(folder), GATEWAY_PIN]
        subprocess.run([sys.executable, "-m", *pip], capture_output=True, timeout=300)
    need(module.exists(), f"{GATEWAY_PIN} from PyPI")
    spec = importlib.util.spec_from_file_location("gateway_manifest_provenance", module)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = loaded  # its dataclasses look their module up
    spec.loader.exec_module(loaded)
    return loaded.verify_manifest


class Resolver:
    def __init__(self, pems: dict[str, bytes]) -> None:
        self.pems = pems

    def resolve_public_key_pem(self, kid: str) -> bytes | None:
        return self.pems.get(kid)


@pytest.mark.heavy
@pytest.mark.parametrize("name", [name for name in VERDICTS if "the gateway raises" not in name])
def test_same_verdict_as_robot_md_gateway(name: str, gateway_check, keys, manifest_path) -> None:
    trusted = rmm.load_trusted_keys(str(keys))
    path = manifest_path(VERDICTS[name][0].encode("utf-8"))
    theirs = gateway_check(path, resolver=Resolver(dict(trusted.pems)))
    ours = rmm.ManifestFile(path, trusted).version().manifest.signature
    assert ours is not None
    assert (ours.accepted, ours.kid, ours.reason) == (theirs.accepted, theirs.kid, theirs.reason)


@pytest.mark.heavy
def test_where_robot_md_gateway_raises_we_refuse(gateway_check, keys, manifest_path) -> None:
    """A signature that is not valid base64 makes the gateway raise (binascii.Error)."""
    path = manifest_path(VERDICTS["unpadded base64 (the gateway raises)"][0])
    with pytest.raises(ValueError):
        gateway_check(path, resolver=Resolver({}))
    got = rmm.ManifestFile(path, rmm.load_trusted_keys(str(keys))).version().manifest.signature
    assert got is not None
    assert (got.accepted, got.reason) == (False, "signature is not valid base64")


@pytest.mark.heavy
@settings(max_examples=300, deadline=None)
@given(
    prose=st.text(st.characters(exclude_categories=["Cs"]), max_size=300),
    kid=st.sampled_from(["op-1", "op-2", "ec-key"]),
    tail=st.sampled_from(["", "\n", "\r\n", " \n\t", "x"]),
)
def test_generated_files_get_the_gateway_verdict(gateway_check, prose: str, kid: str, tail: str) -> None:
    import tempfile

    pems = {"op-1": pem(OPERATOR), "ec-key": pem(ec.generate_private_key(ec.SECP256R1()))}
    text = sign("---\nmetadata: {robot_name: b}\n---\n" + prose, OPERATOR, kid) + tail
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "ROBOT.md"
        path.write_bytes(text.encode("utf-8"))
        theirs = gateway_check(path, resolver=Resolver(pems))
        ours = rmm.check_signature(rmm.read_source(path).read_text, rmm.TrustedKeys(folder, pems))
    assert (ours.accepted, ours.kid, ours.reason) == (theirs.accepted, theirs.kid, theirs.reason)


# what a key folder may hold: a key, another file, a folder, a dot file, a .pem over MAX_KEY_BYTES (not
# trusted), a FIFO named like a key (never opened: reading it would wait for a writer)
KINDS = ["pem", "other", "folder", "dot", "huge"] + (["fifo"] if os.name != "nt" else [])
KEY_FOLDER_ENTRIES = st.lists(st.sampled_from(KINDS), min_size=4, max_size=4)


LIMIT = 24  # MAX_TRUSTED_KEYS for the property below (the real 1,000: the heavy test after it)


@settings(max_examples=12, deadline=None)
@given(
    entries=st.integers(LIMIT - 2, LIMIT + 2),
    kinds=KEY_FOLDER_ENTRIES,
    order=st.randoms(use_true_random=False),
)
def test_a_key_folder_of_more_than_the_limit_of_entries_is_refused_whole(
    tmp_path_factory: pytest.TempPathFactory, entries: int, kinds: list[str], order
) -> None:
    """Up to MAX_TRUSTED_KEYS entries of any kind (KINDS), made in any order: every key in it is trusted,
    the same set whatever the order; one more entry of any kind: refused in one line, never a subset
    (which subset would depend on the machine's directory order)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(rmm, "MAX_TRUSTED_KEYS", LIMIT)
        refused_whole(tmp_path_factory.mktemp("keys"), entries, kinds, order)


def refused_whole(folder: Path, entries: int, kinds: list[str], order: Any) -> None:
    made = [f"k{i}" for i in range(entries)]
    order.shuffle(made)
    key = pem(OPERATOR)
    for i, name in enumerate(made):
        kind = kinds[i % len(kinds)]
        path = folder / {"dot": f".{name}", "other": f"{name}.txt", "folder": name}.get(kind, f"{name}.pem")
        if kind == "folder":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        else:
            path.write_bytes(key + b"\n" * rmm.MAX_KEY_BYTES if kind == "huge" else key)
    if entries > rmm.MAX_TRUSTED_KEYS:
        with pytest.raises(rmm.ManifestError) as refused:
            rmm.load_trusted_keys(str(folder))
        line = refused.value.one_line()
        assert f"more than {rmm.MAX_TRUSTED_KEYS:,} entries" in line and "\n" not in line
        return
    expected = {name for i, name in enumerate(made) if kinds[i % len(kinds)] == "pem"}
    assert set(rmm.load_trusted_keys(str(folder)).pems) == expected


@pytest.mark.heavy
def test_a_key_folder_of_many_entries_is_refused_without_reading_it_all(tmp_path) -> None:
    """A folder of 100,000 empty files is refused without listing it: a twentieth of the time listing it
    takes (reading stops one entry past the limit)."""
    for i in range(100_000):
        os.close(os.open(tmp_path / f"k{i}.pem", os.O_CREAT | os.O_WRONLY, 0o600))
    refusing = float("inf")
    for _ in range(5):  # the quickest of five: one preemption on a busy machine outlasts the whole refusal
        started = time.perf_counter()
        with pytest.raises(rmm.ManifestError, match="entries in the folder"):
            rmm.load_trusted_keys(str(tmp_path))
        refusing = min(refusing, time.perf_counter() - started)
    started = time.perf_counter()
    sorted(os.listdir(tmp_path))
    listing = time.perf_counter() - started
    assert refusing < listing / 20, (refusing, listing)


@pytest.mark.parametrize(
    "text",
    [
        "\n<!-- ROBOT-MD-SIG kid=" + "a" * 2**20,
        "\n<!-- ROBOT-MD-SIG kid=a sig=" + "A" * 2**20 + " x",
        "\n<!-- ROBOT-MD-SIG kid=a sig=AAAA -->x" * (2**20 // 36),
        ("\n<!-- ROBOT-MD-SIG kid=" + "a" * 50) * (2**20 // 75),
        "\n<!-- ROBOT-MD-SIG kid=a sig=AAAA -->" + " \n" * 2**19 + "x",
    ],
    ids=["long-kid", "long-sig", "many-footers", "many-kids", "whitespace-tail"],
)
def test_a_hostile_footer_costs_little(text: str) -> None:
    """The footer pattern is matched in linear time: a 1 MiB file built to make it backtrack is quick."""
    started = time.perf_counter()
    assert not rmm.check_signature(text, None).accepted
    assert time.perf_counter() - started < 1.0


def test_signing_the_file_notifies_who_reads_its_verdict(manifest_path, keys) -> None:
    """Live updates: once the file is signed, the signature, identity, context and body URIs changed."""
    path = manifest_path(GOOD)
    watched = rmm.ManifestFile(path, rmm.load_trusted_keys(str(keys)))
    before = watched.version()
    path.write_text(sign(GOOD, OPERATOR, "op-1"), encoding="utf-8")
    found = rmm.changes(before, watched.version())
    assert {uri.rpartition("/")[2] for uri in found.updated} == {"signature", "identity", "context", "body"}
    assert not found.relisted
