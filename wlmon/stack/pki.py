"""The log store's TLS: a private CA and VictoriaLogs' server certificate, kept in the state's
secrets (`<state>/secrets/victorialogs-tls`, keys mode 0600).

VictoriaLogs serves HTTPS only (`-tls`) and asks every request for basic auth
(`-httpAuth.*`, a generated password in the secrets). Its open-source build has no mutual TLS,
so clients present no certificate: they trust this CA, so a password is only ever sent to
the store itself, never to whatever else took its port (docs/operations.md).

`ensure()` is idempotent: what is there and still good is kept (a restart changes nothing); a
certificate that expires within RENEW_BEFORE, does not match its key, names other hosts or was
not signed by the CA is issued again; a missing or expiring CA means everything is issued again.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# The server's names: the loopback address the native stack uses, and docker-compose's
# service name.
SERVER_DNS = ("localhost", "victorialogs")
SERVER_IPS = ("127.0.0.1",)
CA_DAYS = 3650
LEAF_DAYS = 397  # what public CAs may issue at most: a yearly renewal nobody has to remember
RENEW_BEFORE = dt.timedelta(days=30)
ORGANIZATION = "wlmon"


class PKIError(RuntimeError):
    """A file of the PKI that cannot be written (the message names it)."""


@dataclass(frozen=True)
class LogStorePKI:
    """Where the files are (PEM): ca.pem/ca.key, server.pem/server.key."""

    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / "ca.pem"

    @property
    def ca_key(self) -> Path:
        return self.directory / "ca.key"

    def cert(self, name: str) -> Path:
        return self.directory / f"{name}.pem"

    def key(self, name: str) -> Path:
        return self.directory / f"{name}.key"

    def compose_secrets(self) -> dict[str, Path]:
        """docker-compose's secret name -> file: the configs name /run/secrets/<name>, which
        the native stack's renderer points at these files."""
        return {
            "victorialogs_ca": self.ca,
            "victorialogs_server_cert": self.cert("server"),
            "victorialogs_server_key": self.key("server"),
        }


# docker-compose's file secrets are bind mounts that keep the host file's owner and mode, and
# each server's image runs as its own user (VictoriaLogs root, Prometheus nobody): a
# 0600 key of the host user is unreadable there. For compose the keys are 0644 inside this
# 0700 directory, which no other host user can enter; each container sees only its secrets.
COMPOSE_KEY_MODE = 0o644


def ensure(
    directory: Path, now: dt.datetime | None = None, key_mode: int = 0o600
) -> tuple[LogStorePKI, list[str]]:
    """The CA and server certificate in `directory`, kept when still good; with the
    names of those issued now (empty when everything was kept). Leaf keys get `key_mode`
    (COMPOSE_KEY_MODE for docker-compose); the CA's key is always 0600."""
    now = now or dt.datetime.now(dt.UTC)
    pki = LogStorePKI(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(directory, 0o700)
        issued = []
        ca = _load_ca(pki, now)
        if ca is None:
            ca = _new_ca(pki, now)
            issued.append("ca")
        ca_cert, ca_key = ca
        # Whoever reads the CA's key can mint a certificate clients take for the store's: a
        # kept one is put back to 0600 as the leaf key is put back to key_mode below.
        if pki.ca_key.stat().st_mode & 0o777 != 0o600:
            os.chmod(pki.ca_key, 0o600)
        for leaf in ("server",):
            if "ca" in issued or not _leaf_good(pki, leaf, ca_cert, now):
                _new_leaf(pki, leaf, ca_cert, ca_key, now)
                issued.append(leaf)
            if pki.key(leaf).stat().st_mode & 0o777 != key_mode:
                os.chmod(pki.key(leaf), key_mode)
    except OSError as exc:
        raise PKIError(f"the log store's certificates in {directory}: {exc}") from exc
    return pki, issued


def _load(path: Path) -> x509.Certificate | None:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None


def _load_key(path: Path) -> ec.EllipticCurvePrivateKey | None:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    return key if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _fresh(cert: x509.Certificate, now: dt.datetime) -> bool:
    return cert.not_valid_before_utc <= now and cert.not_valid_after_utc - RENEW_BEFORE > now


def _matches(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey | None) -> bool:
    return key is not None and cert.public_key() == key.public_key()


def _load_ca(pki: LogStorePKI, now: dt.datetime):
    cert, key = _load(pki.ca), _load_key(pki.ca_key)
    if cert is None or not _matches(cert, key) or not _fresh(cert, now):
        return None
    return cert, key


def _leaf_good(pki: LogStorePKI, leaf: str, ca: x509.Certificate, now: dt.datetime) -> bool:
    cert = _load(pki.cert(leaf))
    if cert is None or not _matches(cert, _load_key(pki.key(leaf))) or not _fresh(cert, now):
        return False
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    if leaf == "server":
        try:
            san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return False
        have = set(san.get_values_for_type(x509.DNSName))
        have |= {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
        return have >= {*SERVER_DNS, *SERVER_IPS}
    return True


def _name(common: str) -> x509.Name:
    return x509.Name(
        [
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
            x509.NameAttribute(NameOID.COMMON_NAME, common),
        ]
    )


def _builder(subject: x509.Name, issuer: x509.Name, public_key, now: dt.datetime, days: int):
    # Back-dated a little: a clock a minute behind must not see a certificate from the future.
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _usage(*, digital_signature: bool = False, cert_sign: bool = False) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=digital_signature,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=cert_sign,
        encipher_only=False,
        decipher_only=False,
    )


def _new_ca(pki: LogStorePKI, now: dt.datetime):
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name("wlmon log store CA")
    cert = (
        _builder(name, name, key.public_key(), now, CA_DAYS)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .sign(key, hashes.SHA256())
    )
    _write(pki.ca_key, _key_pem(key), 0o600)
    _write(pki.ca, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return cert, key


def _new_leaf(pki: LogStorePKI, leaf: str, ca: x509.Certificate, ca_key, now: dt.datetime) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    server = leaf == "server"
    builder = (
        _builder(_name(f"wlmon-victorialogs-{leaf}"), ca.subject, key.public_key(), now, LEAF_DAYS)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(digital_signature=True), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]
            ),
            critical=False,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
    )
    if server:
        names: list[x509.GeneralName] = [x509.DNSName(n) for n in SERVER_DNS]
        names += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in SERVER_IPS]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    cert = builder.sign(ca_key, hashes.SHA256())
    _write(pki.key(leaf), _key_pem(key), 0o600)
    _write(pki.cert(leaf), cert.public_bytes(serialization.Encoding.PEM), 0o644)


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _write(path: Path, data: bytes, mode: int) -> None:
    """Whole or not at all (a crash mid-write leaves the old file), with its mode from the
    first byte: a key is never readable by others, not even briefly."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    # O_CREAT's mode applies only to a new file: a .tmp an interrupted run left keeps its own.
    os.fchmod(fd, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    tmp.replace(path)
