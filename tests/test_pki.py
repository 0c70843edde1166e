"""The log store's certificates (wlmon/stack/pki.py): what is issued, kept, re-issued."""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import shutil
import ssl

import pytest
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.x509.oid import ExtendedKeyUsageOID
from typer.testing import CliRunner

from wlmon.cli import app
from wlmon.stack import pki

runner = CliRunner()

NOW = dt.datetime(2026, 11, 25, 12, 0, tzinfo=dt.UTC)
LEAVES = ("server",)


def _cert(path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _contents(directory) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.fixture
def issued(tmp_path) -> pki.LogStorePKI:
    made, names = pki.ensure(tmp_path / "victorialogs-tls", now=NOW)
    assert names == ["ca", *LEAVES]
    return made


def test_the_ca_signs_every_leaf_and_only_signs(issued) -> None:
    ca = _cert(issued.ca)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    usage = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert usage.key_cert_sign and usage.crl_sign and not usage.digital_signature
    for leaf in LEAVES:
        cert = _cert(issued.cert(leaf))
        cert.verify_directly_issued_by(ca)  # raises when another key signed it
        assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        assert cert.extensions.get_extension_for_class(x509.KeyUsage).value.digital_signature


def test_validity_is_back_dated_and_bounded(issued) -> None:
    for path, days in [(issued.ca, pki.CA_DAYS), (issued.cert("server"), pki.LEAF_DAYS)]:
        cert = _cert(path)
        assert cert.not_valid_before_utc < NOW < cert.not_valid_after_utc
        assert cert.not_valid_after_utc - NOW == dt.timedelta(days=days)


def test_the_server_is_named_for_loopback_and_compose_and_serves_only(issued) -> None:
    cert = _cert(issued.cert("server"))
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(san.get_values_for_type(x509.DNSName)) == {"localhost", "victorialogs"}
    assert san.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]


def test_keys_are_private_and_load_into_an_ssl_context(issued) -> None:
    assert issued.directory.stat().st_mode & 0o777 == 0o700
    for leaf in ("ca", *LEAVES):
        assert issued.key(leaf).stat().st_mode & 0o777 == 0o600, leaf
        assert issued.cert(leaf).stat().st_mode & 0o777 == 0o644, leaf
    assert not list(issued.directory.glob("*.tmp"))
    # What the server does with them: loads its certificate with its key (they match).
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(issued.cert("server"), issued.key("server"))
    assert ctx.load_verify_locations(issued.ca) is None


def test_a_second_start_keeps_everything(issued) -> None:
    before = _contents(issued.directory)
    mtimes = {p.name: p.stat().st_mtime_ns for p in issued.directory.iterdir()}
    _, names = pki.ensure(issued.directory, now=NOW + dt.timedelta(days=100))
    assert names == []
    assert _contents(issued.directory) == before
    assert {p.name: p.stat().st_mtime_ns for p in issued.directory.iterdir()} == mtimes


def test_a_leaf_near_its_end_is_reissued_alone(issued) -> None:
    before = _contents(issued.directory)
    # 30 days before the leaves end (397 days), the CA still has years.
    later = NOW + dt.timedelta(days=pki.LEAF_DAYS) - pki.RENEW_BEFORE + dt.timedelta(hours=1)
    _, names = pki.ensure(issued.directory, now=later)
    assert names == list(LEAVES)
    after = _contents(issued.directory)
    assert after["ca.pem"] == before["ca.pem"] and after["ca.key"] == before["ca.key"]
    assert after["server.key"] != before["server.key"]
    _cert(issued.cert("server")).verify_directly_issued_by(_cert(issued.ca))


def test_a_missing_ca_reissues_everything(issued) -> None:
    old_server = _cert(issued.cert("server"))
    issued.ca_key.unlink()
    _, names = pki.ensure(issued.directory, now=NOW)
    assert names == ["ca", *LEAVES]
    new_ca = _cert(issued.ca)
    with pytest.raises(InvalidSignature):  # the old certificates are not the new CA's
        old_server.verify_directly_issued_by(new_ca)
    _cert(issued.cert("server")).verify_directly_issued_by(new_ca)


def test_an_expired_ca_reissues_everything(issued) -> None:
    _, names = pki.ensure(issued.directory, now=NOW + dt.timedelta(days=pki.CA_DAYS))
    assert names == ["ca", *LEAVES]


def test_damaged_or_foreign_leaves_are_reissued(issued, tmp_path) -> None:
    other, _ = pki.ensure(tmp_path / "other", now=NOW)
    # Another CA's certificate (with its own key), a key that is not the certificate's, junk.
    shutil.copy(other.cert("server"), issued.cert("server"))
    shutil.copy(other.key("server"), issued.key("server"))
    _, names = pki.ensure(issued.directory, now=NOW)
    assert names == ["server"]
    _cert(issued.cert("server")).verify_directly_issued_by(_cert(issued.ca))
    # A key that is not the certificate's, then junk.
    shutil.copy(other.key("server"), issued.key("server"))
    assert pki.ensure(issued.directory, now=NOW)[1] == ["server"]
    issued.cert("server").write_text("not a certificate")
    assert pki.ensure(issued.directory, now=NOW)[1] == ["server"]
    _cert(issued.cert("server")).verify_directly_issued_by(_cert(issued.ca))


def test_a_server_certificate_without_the_names_is_reissued(issued, monkeypatch) -> None:
    monkeypatch.setattr(pki, "SERVER_DNS", ("localhost", "victorialogs", "logs.example"))
    _, names = pki.ensure(issued.directory, now=NOW)
    assert names == ["server"]
    san = _cert(issued.cert("server")).extensions.get_extension_for_class(
        x509.SubjectAlternativeName
    )
    assert "logs.example" in san.value.get_values_for_type(x509.DNSName)


def test_an_unwritable_directory_is_one_clear_error(tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(
        pki.PKIError, match=r"the log store's certificates in .*file/victorialogs-tls"
    ):
        pki.ensure(blocker / "victorialogs-tls", now=NOW)


def test_a_kept_cas_key_is_put_back_to_private(issued) -> None:
    issued.ca_key.chmod(0o644)
    issued.key("server").chmod(0o644)
    assert pki.ensure(issued.directory, now=NOW)[1] == []  # kept, not re-issued
    assert issued.ca_key.stat().st_mode & 0o777 == 0o600
    assert issued.key("server").stat().st_mode & 0o777 == 0o600


def test_a_key_is_never_written_into_a_readable_leftover(tmp_path, monkeypatch) -> None:
    """A .tmp an interrupted run left with a looser mode: the key's bytes go into it only
    once it is 0600 (O_CREAT's mode does not apply to a file that exists)."""
    directory = tmp_path / "victorialogs-tls"
    directory.mkdir(mode=0o700)
    stale = directory / "ca.key.tmp"
    stale.write_bytes(b"")
    stale.chmod(0o644)
    modes = []
    fdopen = os.fdopen

    def spy(fd, *args, **kwargs):
        if not modes:
            modes.append(os.fstat(fd).st_mode & 0o777)  # when the first bytes go in
        return fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(os, "fdopen", spy)
    pki.ensure(directory, now=NOW)
    assert modes == [0o600]
    assert (directory / "ca.key").stat().st_mode & 0o777 == 0o600


def test_compose_secret_names_cover_every_file(issued) -> None:
    files = issued.compose_secrets()
    assert files["victorialogs_ca"] == issued.ca
    assert files["victorialogs_server_key"] == issued.key("server")
    assert files["victorialogs_server_cert"] == issued.cert("server")
    assert set(files.values()) == {p for p in issued.directory.iterdir()} - {issued.ca_key}


def test_the_cli_makes_them_for_compose_and_keeps_them(tmp_path) -> None:
    target = tmp_path / "secrets" / "victorialogs-tls"
    first = runner.invoke(app, ["stack", "logs-certs", "--dir", str(target), "--compose"])
    assert first.exit_code == 0, first.output
    assert "issued now: ca, server" in first.output
    made = pki.LogStorePKI(target)
    # Readable by the container's own user; the directory keeps other host users out.
    assert made.key("server").stat().st_mode & 0o777 == pki.COMPOSE_KEY_MODE
    assert made.ca_key.stat().st_mode & 0o777 == 0o600
    assert target.stat().st_mode & 0o777 == 0o700
    again = runner.invoke(app, ["stack", "logs-certs", "--dir", str(target)])
    assert again.exit_code == 0, again.output
    assert "issued now: none" in again.output
    assert f"--cacert {made.ca}" in again.output
    # Without --compose the key is private again.
    assert made.key("server").stat().st_mode & 0o777 == 0o600


def test_the_exporter_wants_a_client_certificate_with_its_key(tmp_path) -> None:
    cert = tmp_path / "client.pem"
    cert.write_text("x")
    r = runner.invoke(app, ["exporter", "--logs-url", "https://x", "--logs-cert-file", str(cert)])
    assert r.exit_code != 0
    assert "--logs-cert-file/--logs-key-file: give both" in r.output
    assert "Traceback" not in r.output


def test_the_exporter_wants_a_user_for_a_password(tmp_path) -> None:
    r = runner.invoke(
        app, ["exporter", "--logs-url", "https://x"], env={"WLMON_LOGS_PASSWORD": "pw"}
    )
    assert r.exit_code != 0
    assert "WLMON_LOGS_PASSWORD: set, but --logs-username" in r.output
    assert "pw" not in r.output.replace("WLMON_LOGS_PASSWORD", "")
