"""EmailSink against a real SMTP server on loopback (aiosmtpd, in this process), on real Spark: one
run mails each table's rows as a CSV attachment (quoted where needed, nulls empty) to every recipient,
sent only in the commit phase; a table over the attachment bound fails deterministically."""

from __future__ import annotations

import csv
import email
import io
import socket

import pytest

from airflow_provider_seatunnel.connectors.email import CONNECTOR as EMAIL
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import DataError


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


def test_rows_mailed_as_csv_once_at_commit_and_bounded(plan_of, spark, smtp):
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
