"""EmailSink's compile-time rules (SeaTunnel's required options, the protocol's choices, the port's
range), its secret kept out of the plan, and the mail it builds (subject, body, CSV attachment)."""

from __future__ import annotations

import json

from airflow_provider_seatunnel.connectors.email import CONNECTOR, build_message, recipients
from airflow_provider_seatunnel.spi.contract import ConnectionInfo
from airflow_provider_seatunnel.spi.registry import get_connector, secret_options

SOURCE = 'source { FakeSource { plugin_output = "f", schema = { fields { id = int } } } }'
FULL = {"email_from_address": '"a@example.com"', "email_to_address": '"b@example.com, c@example.com"',
        "email_host": '"smtp.example.com"', "email_transport_protocol": '"smtp"', "email_smtp_auth": "true",
        "email_authorization_code": '"code-xyz"', "email_message_headline": '"t"', "email_message_content": '"c"'}


def job(**options: str) -> str:
    body = ", ".join(f"{k} = {v}" for k, v in options.items())
    return f'env {{ job.mode = "BATCH" }}\n{SOURCE}\nsink {{\n  EmailSink {{ plugin_input = "f", {body} }}\n}}\n'


def test_registered_by_seatunnel_name_with_secret():
    assert get_connector("emailsink") is CONNECTOR and get_connector("EmailSink", "sink") is CONNECTOR
    assert "email_authorization_code" in secret_options("EmailSink")


def test_full_block_plans_and_keeps_the_code_out(plan_of):
    plan = plan_of(job(**FULL))
    assert "code-xyz" not in json.dumps(plan.to_dict())


def test_each_required_option_is_located(config_error):
    for key in ("email_to_address", "email_message_headline", "email_authorization_code", "email_smtp_auth"):
        options = {k: v for k, v in FULL.items() if k != key}
        message = str(config_error(job(**options)))
        assert key in message and "required" in message, message


def test_protocol_choices_and_port_range(config_error):
    assert "email_transport_protocol" in str(config_error(job(**{**FULL, "email_transport_protocol": '"imap"'})))
    assert "email_smtp_port" in str(config_error(job(**{**FULL, "email_smtp_port": "70000"})))


def test_a_connection_lifts_host_sender_auth_and_code(plan_of, config_error):
    lifted = {k: v for k, v in FULL.items()
              if k not in ("email_host", "email_from_address", "email_smtp_auth", "email_authorization_code")}
    plan_of(job(**lifted, smtp_conn_id='"mail"'))
    assert "email_host" in str(config_error(job(**lifted)))


def test_connection_options_follow_airflow_smtp_fields():
    got = CONNECTOR.connection_options(ConnectionInfo("m", "smtp", host="mx", port=2525, login="u",
                                                      password="p", extra={"from_email": "f@x", "timeout": 5}))
    assert got == {"email_host": "mx", "email_smtp_port": 2525, "email_smtp_login": "u",
                   "email_from_address": "f@x", "email_authorization_code": "p", "email_smtp_auth": True,
                   "email_smtp_timeout": 5}
    plain = CONNECTOR.connection_options(ConnectionInfo("m", "smtp", host="mx", extra={"disable_ssl": True}))
    assert plain["email_smtp_auth"] is False and plain["email_authorization_code"] == ""


def test_message_has_recipients_subject_body_and_csv():
    assert recipients(" a@x ,, b@y ") == ["a@x", "b@y"]
    message = build_message({"email_from_address": "a@x", "email_to_address": "b@y,c@z",
                             "email_message_headline": "subject", "email_message_content": "body"}, "1,a\n")
    assert message["To"] == "b@y, c@z" and message["Subject"] == "subject"
    parts = list(message.iter_parts())
    assert parts[0].get_content().strip() == "body"
    assert parts[1].get_filename() == "emailsink.csv" and parts[1].get_content() == "1,a\n"
