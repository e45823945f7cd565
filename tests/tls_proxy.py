"""A small real TLS reverse proxy for tests: https with a fresh self-signed certificate for 127.0.0.1, HTTP
basic authentication required, in front of a plain-HTTP server on loopback (the embedded OpenSearch node runs
without its security plugin; this gives the connectors' https and login paths a real server to talk to).

``running(upstream, user, password, folder)`` yields a :class:`TlsProxy`: ``url`` (``https://127.0.0.1:<port>``),
``ca`` (the certificate as a PEM file, the trust store a client names), ``seen`` (the ``Authorization`` header
of each request, so a test can check credentials travel only there). A request without the right credentials
is answered 401 and never forwarded; every other is forwarded (method, path and query, body, content type) and
the upstream's answer relayed. Python's ``ssl`` and ``http.server`` only.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def self_signed(folder: Path, host: str = "127.0.0.1") -> tuple[Path, Path]:
    """A fresh certificate (for ``host`` as common name and IP SAN, and localhost) and its key, PEM files."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.datetime.now(datetime.UTC)
    san = x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(host)), x509.DNSName("localhost")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1)).add_extension(san, critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    folder.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = folder / "proxy-cert.pem", folder / "proxy-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


@dataclass
class TlsProxy:
    server: ThreadingHTTPServer
    ca: Path
    seen: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}"


def _handler(upstream: str, expected: str, proxy: list[TlsProxy]) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def _answer(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _serve(self) -> None:
            auth = self.headers.get("Authorization") or ""
            proxy[0].seen.append(auth)
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else None
            if auth != expected:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="test"')
                body = b'{"error":{"type":"security_exception","reason":"missing or wrong credentials"},"status":401}'
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            req = urllib.request.Request(upstream + self.path, data=data, method=self.command)
            req.add_header("Content-Type", self.headers.get("Content-Type") or "application/json")
            try:
                with urllib.request.urlopen(req, timeout=120) as answer:
                    self._answer(answer.status, answer.read(), answer.headers.get("Content-Type") or "")
            except urllib.error.HTTPError as e:
                self._answer(e.code, e.read(), e.headers.get("Content-Type") or "application/json")

        do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve

    return Forward


@contextlib.contextmanager
def running(upstream: str, user: str, password: str, folder: Path) -> Iterator[TlsProxy]:
    """A started proxy to ``upstream`` (``http://host:port``); stopped at exit."""
    cert, key = self_signed(folder)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    holder: list[TlsProxy] = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(upstream.rstrip("/"), expected, holder))
    httpd.daemon_threads = True
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    proxy = TlsProxy(httpd, cert)
    holder.append(proxy)
    thread = threading.Thread(target=httpd.serve_forever, name="test-tls-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        httpd.shutdown()
        httpd.server_close()
