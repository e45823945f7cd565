"""Restore-trial targets that take no part in a commit (:mod:`restore_faults`): the Http sink and EmailSink.

Neither an HTTP endpoint nor a mail server can stage, fence or roll back, so these sinks deliver **at least
once** (docs/restores.md): a killed or failed attempt may have delivered some rows, and the restore delivers
them again. Their trials check the other half of the promise: **no row is ever lost**, and they count the
duplicates honestly (``restore_faults`` scores them with the at-least-once rule: a trial passes when the
restore succeeds and every input row arrived at least once).

* ``Http``: two Http sinks of one pipeline POST each row as JSON to two routes of a private HTTP server in
  this process (``tests/http_server.py``, on a free loopback port); a reader sees every body received.
* ``Email``: two EmailSink blocks mail the rows as a CSV attachment to two recipients of a private SMTP
  server in this process (aiosmtpd on a free loopback port); a reader sees the rows of every mail received.

Nothing is there before a trial (``old`` is empty): each seed forgets what the server received.
"""

from __future__ import annotations

import csv
import email
import io
import json
import socket
import threading
from collections.abc import Callable
from typing import Any

Row = tuple[int, str, str]

HTTP_READING = (
    "The targets are two routes of a private HTTP server in the benchmark's process (`tests/http_server.py`); "
    "each row is one POST. *Visible after attempt 1* is what the server received per route (`old`: nothing, "
    "`all`: every row once, `PARTIAL`: some rows, or some twice). An HTTP endpoint takes no part in a commit, so "
    "the sink is **at least once**: a trial passes when the restore succeeds and no row is lost; duplicates are "
    "counted, not hidden. *Raw* counts the requests received after attempt 1 → after the restore.")
EMAIL_READING = (
    "The targets are two recipients of a private SMTP server in the benchmark's process (aiosmtpd); each "
    "EmailSink mails one CSV attachment per table at the commit. *Visible after attempt 1* is what the "
    "recipient's mails hold (`old`: no mail, `all`: every row once, `PARTIAL`: some rows, or some twice). A mail "
    "server takes no part in a commit, so the sink is **at least once**: a restore that reaches the commit "
    "again mails again. A trial passes when the restore succeeds and no row is lost; duplicates are counted. "
    "*Raw* counts the mails received after attempt 1 → after the restore.")


def _http(resources: Any) -> Any:
    if getattr(resources, "http", None) is None:
        from tests import http_server

        resources.http = resources.enter_context(http_server.running())
    return resources.http


def http_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """Two Http sinks, to the routes ``/a`` and ``/b`` (``sink_cls``: :class:`restore_faults.Sink`)."""
    server = _http(resources)

    def seeder(path: str) -> Callable[[], None]:
        def seed() -> None:
            with server.lock:
                server.seen[:] = [s for s in server.seen if s.path != path]
            server.route(path, lambda seen: (200, {"ok": True}))
        return seed

    def reader(path: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            return [(int(d["id"]), d["name"], d["grp"]) for d in (json.loads(s.body) for s in server.requests_to(path))]
        return read

    def raw(path: str) -> Callable[[], int]:
        return lambda: len(server.requests_to(path))

    return [sink_cls(f"Http {path}", f'Http {{ plugin_input = "rows", url = "{server.url(path)}" }}',
                     seeder(path), reader(path), raw(path), [])
            for path in ("/a", "/b")]


class Inbox:
    """The mails an SMTP server received (aiosmtpd's handler)."""

    def __init__(self) -> None:
        self.mails: list[tuple[list[str], bytes]] = []
        self.lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.lock:
            self.mails.append((list(envelope.rcpt_tos), envelope.content))
        return "250 OK"

    def to(self, rcpt: str) -> list[bytes]:
        with self.lock:
            return [content for rcpts, content in self.mails if rcpt in rcpts]

    def forget(self, rcpt: str) -> None:
        with self.lock:
            self.mails[:] = [m for m in self.mails if rcpt not in m[0]]


def _smtp(resources: Any) -> tuple[Inbox, int]:
    if getattr(resources, "smtp", None) is None:
        from aiosmtpd.controller import Controller

        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        inbox = Inbox()
        controller = Controller(inbox, hostname="127.0.0.1", port=port)
        controller.start()
        resources.callback(controller.stop)
        resources.smtp = (inbox, port)
    return resources.smtp


def _mail_rows(content: bytes) -> list[Row]:
    message = email.message_from_bytes(content)
    out: list[Row] = []
    for part in message.walk():
        if part.get_filename():
            text = part.get_payload(decode=True).decode()
            out.extend((int(r[0]), r[1], r[2]) for r in csv.reader(io.StringIO(text)) if r)
    return out


def email_sinks(rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """Two EmailSink blocks, to the recipients ``a@example.com`` and ``b@example.com``."""
    inbox, port = _smtp(resources)

    def read(rcpt: str) -> Callable[[], list[Row]]:
        return lambda: [r for content in inbox.to(rcpt) for r in _mail_rows(content)]

    def block(rcpt: str) -> str:
        return (f'EmailSink {{ plugin_input = "rows", email_from_address = "trials@example.com", '
                f'email_to_address = "{rcpt}", email_host = "127.0.0.1", email_transport_protocol = "smtp", '
                f'email_smtp_auth = "false", email_smtp_port = {port}, email_authorization_code = "", '
                f'email_message_headline = "restore trial", email_message_content = "rows attached" }}')

    return [sink_cls(f"EmailSink {rcpt}", block(rcpt), lambda rcpt=rcpt: inbox.forget(rcpt), read(rcpt),
                     lambda rcpt=rcpt: len(inbox.to(rcpt)), [])
            for rcpt in ("a@example.com", "b@example.com")]


__all__ = ["EMAIL_READING", "HTTP_READING", "email_sinks", "http_sinks"]
