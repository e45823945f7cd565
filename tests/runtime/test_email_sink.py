"""EmailSink against a real SMTP server on loopback (aiosmtpd, in this process), on real Spark: one
run mails each table's rows as a CSV attachment (quoted where needed, nulls empty) to every recipient,
sent only in the commit phase; a table over the attachment bound fails deterministically; and a login
over implicit TLS with an Airflow smtp connection's credentials, which never reach the plan."""

from __future__ import annotations

import csv
import email
import io
import json
import socket
import ssl
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors.email import CONNECTOR as EMAIL
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import DataError

# the TLS server below is implicit TLS, which aiosmtpd does not count as TLS when it takes a login
pytestmark = pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")


class Inbox:
    def __init__(self) -> None:
        self.mails: list[tuple[str, list[str], bytes]] = []

    async def handle_DATA(self, server, session, envelope):
        self.mails.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content))
        return "250 OK"


@pytest.fixture(scope="module")
def smtp():
    from aiosmtpd.controller import Controller

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def self_signed(tmp: Path) -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for 127.0.0.1."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    (tmp / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    return context


@pytest.fixture(scope="module")
def smtps(tmp_path_factory):
    """An SMTP server over implicit TLS that takes one login: sender@example.com / the code below."""
    from aiosmtpd.controller import Controller
    from aiosmtpd.smtp import AuthResult

    def check(server, session, envelope, mechanism, data):
        return AuthResult(success=(data.login, data.password) == (b"mailer", CODE.encode()))

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=port,
                            ssl_context=self_signed(tmp_path_factory.mktemp("tls")), authenticator=check,
                            auth_required=True, auth_require_tls=False)  # implicit TLS: aiosmtpd sees no STARTTLS
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


CODE = "authorization-code-7"


def job(port: int, extra: str = "") -> str:
    return f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ id = int, name = string }} }}
            rows = [
              {{ kind = INSERT, fields = [1, "ann"] }},
              {{ kind = INSERT, fields = [2, "b, \\"q\\""] }},
              {{ kind = INSERT, fields = [3, null] }}
            ] }} }}
        sink {{ EmailSink {{ plugin_input = "f", email_from_address = "sender@example.com",
            email_to_address = "r1@example.com,r2@example.com", email_host = "127.0.0.1",
            email_transport_protocol = "smtp", email_smtp_auth = "false", email_smtp_port = {port},
            email_authorization_code = "", email_message_headline = "test-title",
            email_message_content = "test-content" {extra} }} }}
    """


def prepared(plan, spark):
    from airflow_provider_seatunnel.connectors.fakesource import CONNECTOR as FAKE

    pipeline = plan.pipelines[0]
    source = next(v for v in pipeline.vertices if v.plugin == "FakeSource")
    sink = next(v for v in pipeline.vertices if v.plugin == "EmailSink")
    ctx = RunContext(spark, plan, pipeline, "mail")
    data = FAKE.read(ctx, source)
    return ctx, sink, data


def test_rows_mailed_as_csv_once_at_commit_and_bounded(plan_of, spark, smtp, run_job):
    inbox, port = smtp
    ctx, sink, data = prepared(plan_of(job(port)), spark)
    info = EMAIL.prepare(ctx, sink, data)
    assert inbox.mails == []  # nothing is sent before the commit
    EMAIL.commit(ctx, sink, info)
    assert len(inbox.mails) == 1
    sender, rcpts, content = inbox.mails[0]
    assert sender == "sender@example.com" and rcpts == ["r1@example.com", "r2@example.com"]
    message = email.message_from_bytes(content)
    assert message["Subject"] == "test-title" and message["To"] == "r1@example.com, r2@example.com"
    parts = [p for p in message.walk() if not p.is_multipart()]
    assert parts[0].get_payload(decode=True).decode().strip() == "test-content"
    assert parts[1].get_filename() == "emailsink.csv"
    text = parts[1].get_payload(decode=True).decode()
    # FakeSource's rows come from each of the 2 readers (as SeaTunnel's): both partitions in the one mail
    assert sorted(csv.reader(io.StringIO(text))) == sorted([["1", "ann"], ["2", 'b, "q"'], ["3", ""]] * 2)
    assert '"b, ""q"""' in text  # RFC 4180 quoting

    ctx, sink, data = prepared(plan_of(job(port, ", email_max_attachment_bytes = 10")), spark)
    with pytest.raises(DataError, match="email_max_attachment_bytes"):
        EMAIL.prepare(ctx, sink, data)
    EMAIL.abort(ctx, sink, None)
    assert len(inbox.mails) == 1

    metrics = run_job(job(port))  # the engine's two phases: one more mail, the rows counted once
    assert len(inbox.mails) == 2
    assert metrics[0]["write_count"] == 6 and metrics[0]["read_count"] == 6


def test_login_over_tls_from_an_airflow_connection(plan_of, spark, smtps, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    inbox, port = smtps
    monkeypatch.setenv("AIRFLOW_CONN_MAILER", json.dumps({
        "conn_type": "smtp", "host": "127.0.0.1", "port": port, "login": "mailer", "password": CODE,
        "extra": {"from_email": "sender@example.com", "timeout": 10}}))
    text = job(0).replace('email_host = "127.0.0.1",', "").replace('email_smtp_auth = "false",', "")
    text = text.replace(f"email_smtp_port = {0},", 'smtp_conn_id = "mailer",')
    text = text.replace('email_authorization_code = "",', "").replace('email_from_address = "sender@example.com",', "")
    plan = plan_of(text)
    resolved = with_connections(plan)
    assert CODE not in json.dumps(plan.to_dict()) and CODE not in json.dumps(resolved.to_dict())
    ctx, sink, data = prepared(resolved, spark)
    EMAIL.commit(ctx, sink, EMAIL.prepare(ctx, sink, data))
    assert [(m[0], m[1]) for m in inbox.mails] == [("sender@example.com", ["r1@example.com", "r2@example.com"])]

