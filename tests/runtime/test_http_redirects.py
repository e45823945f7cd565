"""The Http source's requests on a redirect, against two real HTTP servers on loopback
(tests/http_server.py): credential headers (the block's ``headers``, the connection's extra headers and
Authorization) never reach another origin; a redirect within the origin keeps them."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.http.datasource import ONCE, HttpPartition, read_partition
from airflow_provider_seatunnel.connectors.http.options import CONN_AUTHORIZATION, CONN_HEADERS, parse
from airflow_provider_seatunnel.connectors.http.request import origin, strip_on_redirect

SECRET_HEADERS = ("X-Api-Key", "X-Conn-Token", "Authorization")


@pytest.fixture(scope="module")
def two():
    from tests import http_server

    with http_server.running() as first, http_server.running() as second:
        yield first, second


def _options(url: str) -> dict:
    return {"url": url, "format": "text", "headers": {"X-Api-Key": "k-123", "Accept": "text/plain"},
            CONN_HEADERS: {"X-Conn-Token": "t-456"}, CONN_AUTHORIZATION: "Basic dTpw"}


def test_a_redirect_to_another_origin_sends_none_of_the_credential_headers(two):
    first, second = two
    first.reset()
    second.reset()
    first.route("/start", lambda seen: (302, "", {"Location": second.url("/land")}))
    second.route("/land", lambda seen: (200, "landed"))

    rows = list(read_partition(parse(_options(first.url("/start"))), HttpPartition(ONCE)))

    assert [r[0] for r in rows] == ["landed"]
    (at_first,) = first.requests_to("/start")
    assert all(at_first.header(h) for h in SECRET_HEADERS)  # the first origin got them
    (landed,) = second.requests_to("/land")
    assert [h for h in SECRET_HEADERS if landed.header(h) is not None] == []
    assert landed.header("Accept") != "text/plain"  # every header the block sets is guarded, Accept too


def test_a_redirect_within_the_origin_keeps_them(two):
    first, _ = two
    first.reset()
    first.route("/start", lambda seen: (302, "", {"Location": first.url("/land")}))
    first.route("/land", lambda seen: (200, "landed"))

    list(read_partition(parse(_options(first.url("/start"))), HttpPartition(ONCE)))

    (landed,) = first.requests_to("/land")
    assert landed.header("X-Api-Key") == "k-123"
    assert landed.header("X-Conn-Token") == "t-456"
    assert landed.header("Authorization") == "Basic dTpw"


@pytest.mark.parametrize("new, kept", [
    ("https://api.example/b", True),
    ("https://API.example:443/c", True),
    ("http://api.example/b", False),        # a downgrade
    ("https://api.example:8443/b", False),  # another port
    ("https://other.example/b", False),
])
def test_the_origin_is_scheme_host_and_port(new, kept):
    headers = {"X-Api-Key": "k", "Cookie": "c=1", "Accept": "*/*"}
    dropped = strip_on_redirect(headers, "https://api.example/a", new, frozenset({"x-api-key", "cookie"}))
    assert ("X-Api-Key" in headers) is kept
    assert ("Cookie" in headers) is kept
    assert headers["Accept"] == "*/*"
    assert sorted(dropped) == ([] if kept else ["Cookie", "X-Api-Key"])
    assert origin("HTTPS://Api.Example/x") == ("https", "api.example", 443)
