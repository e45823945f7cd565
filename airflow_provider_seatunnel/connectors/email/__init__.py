"""EmailSink: the rows of each input table as a CSV attachment (``emailsink.csv``) of one mail, sent
over SMTP by Python's ``smtplib`` from the driver, as SeaTunnel's ``EmailSink`` mails its rows.

SeaTunnel's options and rules: ``email_from_address``, ``email_to_address`` (comma-separated),
``email_host``, ``email_transport_protocol``, ``email_smtp_auth``, ``email_authorization_code`` (a
secret: the password), ``email_message_headline`` (the subject), ``email_message_content`` (the text
body), ``email_smtp_port`` (465). With ``email_smtp_auth`` true the connection is SMTP over TLS
(implicit TLS, the server's certificate not verified, as SeaTunnel) logged in as the sender with the
authorization code; false, plain SMTP without login. ``smtp_conn_id`` names an Airflow connection of
type ``smtp`` that gives the host, port, login, password and, in its extra, ``from_email``,
``disable_ssl`` and ``timeout``; the block's own options win.

The mail is built in the prepare phase (one pass renders and counts the CSV lines and caches them; they
reach the driver only when their size is within ``email_max_attachment_bytes``, else the job fails
deterministically) and sent in the
commit phase, so a pipeline whose other sink fails to prepare sends nothing. A mail server takes no
part in a commit: a retried task or a restore that reaches the commit again sends the mail again
(at least once, docs/restores.md). Deviations from SeaTunnel 2.3.8: :data:`DEVIATIONS`.
"""

from __future__ import annotations

import logging
import smtplib
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from email.message import EmailMessage
from typing import Any

from ...spi import SINK, Capabilities, ConnectionInfo, Connector, Dataset, FromConnection, RunContext, Vertex
from ...spi.contract import TwoPhaseSink
from ...spi.errors import DataError, PipelineError, RuntimeConfigError
from ...spi.optionspec import Option, OptionSpec
from ...spi.rows import data_columns, quote

log = logging.getLogger("seatunnel.email")

CONN_OPTION = "smtp_conn_id"
ATTACHMENT = "emailsink.csv"
#: the default bound on one table's CSV attachment (bytes)
MAX_ATTACHMENT = 10 * 1024 * 1024

#: Spark's CSV writer made RFC 4180: quotes doubled, nulls empty, spaces kept
_CSV = {"nullValue": "", "escape": '"', "emptyValue": '""', "ignoreLeadingWhiteSpace": "false",
        "ignoreTrailingWhiteSpace": "false"}
_FROM_CONN = (CONN_OPTION,)
SPEC = OptionSpec((
    Option("email_from_address", required=True, allow_blank=False, required_unless=_FROM_CONN,
           description="The sender's address (an smtp_conn_id connection's extra from_email, else its login)."),
    Option("email_to_address", required=True, allow_blank=False, identity=True,
           description="The recipients, separated by commas."),
    Option("email_host", required=True, allow_blank=False, required_unless=_FROM_CONN,
           description="The SMTP server."),
    Option("email_transport_protocol", "enum", required=True, choices=("smtp", "smtps"),
           description="The session's protocol: smtp (implicit TLS when email_smtp_auth is true) or smtps "
                       "(always implicit TLS)."),
    Option("email_smtp_auth", "bool", required=True, required_unless=_FROM_CONN,
           description="Log in as the sender with email_authorization_code, over TLS (true), or send "
                       "in plain SMTP without login (false)."),
    Option("email_authorization_code", required=True, required_unless=_FROM_CONN, secret=True,
           description="The sender's password or authorization code (an smtp_conn_id connection's password)."),
    Option("email_message_headline", required=True, description="The subject of the mail."),
    Option("email_message_content", required=True, description="The text body of the mail."),
    Option("email_smtp_port", "int", 465, "The SMTP server's port.", minimum=1, maximum=65535),
    Option(CONN_OPTION, description="An Airflow connection of type smtp: host, port, login, password; "
           "extra from_email, disable_ssl, timeout."),
    Option("email_smtp_login", allow_blank=False, description="Set from an smtp_conn_id connection's login "
           "(the sender's address otherwise): the user name of email_smtp_auth."),
    Option("email_smtp_timeout", "int", 30, "Seconds to wait for the server (an smtp_conn_id connection's "
           "extra timeout).", minimum=1),
    Option("email_max_attachment_bytes", "long", MAX_ATTACHMENT, "The largest CSV attachment one table may "
           "make; beyond it the job fails (the rows are collected to the driver).", minimum=1,
           maximum=1024 * 1024 * 1024),
    Option("multi_table_sink_replica", "int", 1, "SeaTunnel's writers per table; one mail per table here.",
           minimum=1),
))

DEVIATIONS = (
    "one mail per input table, with all its rows, whatever the parallelism; SeaTunnel mails once per "
    "writer (each parallel writer sends its own share) and every writer writes the same local file",
    "the attachment is RFC 4180 CSV: fields with commas, quotes or line breaks are quoted, nulls are empty; "
    "SeaTunnel joins the values' text with commas unquoted, keeps a trailing comma and drops a character "
    "of the first line, and fails on a null",
    "the mail is sent in the commit phase, after every sink of the pipeline prepared; SeaTunnel sends when "
    "its writer closes",
    "the rows are collected to the driver up to email_max_attachment_bytes (10 MiB) per table; beyond it "
    "the job fails deterministically (SeaTunnel buffers every row in memory)",
)


@dataclass(frozen=True)
class Mail:
    """One message ready to send: the table it carries and its MIME form (no credentials)."""

    table: str
    rows: int
    message: EmailMessage


class Email(Connector, TwoPhaseSink, FromConnection):
    name = "EmailSink"
    connection_option = CONN_OPTION
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True)
    option_spec = SPEC
    description = "Mails each table's rows as a CSV attachment over SMTP (smtplib), at least once."

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """From a connection of type ``smtp``: host, port, login, password; the extra's ``from_email``
        (else the login) as the sender, ``disable_ssl`` (no TLS, no login unless a password is set)
        and ``timeout``."""
        extra = conn.extra or {}
        out: dict[str, Any] = {}
        if conn.host:
            out["email_host"] = conn.host
        if conn.port:
            out["email_smtp_port"] = int(conn.port)
        if conn.login:
            out["email_smtp_login"] = conn.login
        sender = extra.get("from_email") or conn.login
        if sender:
            out["email_from_address"] = str(sender)
        out["email_authorization_code"] = conn.password or ""
        out["email_smtp_auth"] = bool(conn.password) or not _true(extra.get("disable_ssl"))
        if extra.get("timeout") is not None:
            out["email_smtp_timeout"] = int(extra["timeout"])
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "email_authorization_code" not in options

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Each table's rows as a CSV attachment of one mail, built on the driver (bounded)."""
        o = SPEC.run_time(vertex.config, SINK)
        mails = []
        for table, df in data.items():
            faulted = ctx.with_write_faults(vertex, df)
            text, rows = collect_csv(ctx, faulted, int(o["email_max_attachment_bytes"]), table)
            mails.append(Mail(table, rows, build_message(o, text)))
        return tuple(mails)

    def commit(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        """Send every prepared mail (one SMTP session)."""
        o = SPEC.run_time(vertex.config, SINK)
        with _session(o) as client:
            for mail in info or ():
                client.send_message(mail.message)
                log.info("EmailSink %s: mailed %d row(s) of %s to %s", vertex.ref, mail.rows, mail.table,
                         mail.message["To"])

    def abort(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        """Nothing was sent: the prepared mails are dropped."""


def _true(value: Any) -> bool:
    return str(value).strip().lower() in ("true", "1", "yes")


def recipients(value: str) -> list[str]:
    """``email_to_address`` split at commas, blanks dropped."""
    return [a.strip() for a in value.split(",") if a.strip()]


def build_message(o: Mapping[str, Any], csv_text: str) -> EmailMessage:
    """The mail: subject, text body and the CSV attachment."""
    message = EmailMessage()
    message["From"] = o["email_from_address"]
    message["To"] = ", ".join(recipients(o["email_to_address"]))
    message["Subject"] = o["email_message_headline"]
    message.set_content(o["email_message_content"])
    message.add_attachment(csv_text.encode("utf-8"), maintype="text", subtype="csv", filename=ATTACHMENT)
    return message


def collect_csv(ctx: RunContext, df: Any, limit: int, table: str) -> tuple[str, int]:
    """The rows of ``df`` (data columns, as text) as CSV lines, each ended by a newline, and their count.
    One pass renders (and counts) the lines and caches them (``ctx.materialize``); their size is summed
    there, and past ``limit`` bytes the job fails (:class:`DataError`) before any row reaches the driver."""
    from pyspark.sql import functions as F

    columns = data_columns(df)
    fields = [F.col(quote(c)).cast("string").alias(f"c{i}") for i, c in enumerate(columns)]
    line = F.to_csv(F.struct(*fields), _CSV) if fields else F.lit("")
    lines = ctx.materialize(df.select(line.alias("line"), (F.octet_length(line) + 1).alias("size")))
    try:
        size = lines.agg(F.coalesce(F.sum("size"), F.lit(0))).collect()[0][0]
        if size > limit:
            raise DataError(f"the rows of {table} make a CSV attachment of {size} bytes, over "
                            f"email_max_attachment_bytes ({limit}): filter them, or raise the bound")
        out = [row[0] for row in lines.select("line").collect()]
    finally:
        lines.unpersist()
    return "".join(f"{s}\n" for s in out), len(out)


def _session(o: Mapping[str, Any]) -> Any:
    """A connected (and, with ``email_smtp_auth``, logged-in) SMTP client; failures classified: a refused
    login is deterministic, an unreachable server transient."""
    host, port, timeout = o["email_host"], int(o["email_smtp_port"]), int(o["email_smtp_timeout"])
    tls = bool(o["email_smtp_auth"]) or o["email_transport_protocol"] == "SMTPS"
    try:
        if tls:
            context = ssl.create_default_context()
            context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # SeaTunnel trusts all hosts
            client: smtplib.SMTP = smtplib.SMTP_SSL(host, port, timeout=timeout, context=context)
        else:
            client = smtplib.SMTP(host, port, timeout=timeout)
    except OSError as e:
        raise PipelineError(f"cannot reach the SMTP server {host}:{port}: {type(e).__name__}: {e}") from None
    if o["email_smtp_auth"]:
        try:
            client.login(o["email_smtp_login"] or o["email_from_address"], o["email_authorization_code"] or "")
        except smtplib.SMTPAuthenticationError as e:
            client.close()
            raise RuntimeConfigError(f"the SMTP server {host}:{port} refused the login ({e.smtp_code}): check "
                                     "email_authorization_code or the smtp_conn_id connection") from None
    return client


CONNECTOR = Email()
