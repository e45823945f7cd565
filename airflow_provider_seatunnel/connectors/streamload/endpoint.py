"""The frontends a Stream Load sink talks to: their HTTP addresses, the MySQL-protocol host and port, the user."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Endpoint:
    """The frontends' addresses and credentials (:attr:`label` shows neither credential). ``query_host`` is the
    MySQL-protocol host; empty means the first frontend's host."""

    fenodes: tuple[str, ...]
    query_port: int
    username: str = field(default="", repr=False)
    password: str = field(default="", repr=False)
    query_host: str = ""

    @property
    def label(self) -> str:
        return ",".join(self.fenodes)

    @property
    def mysql_host(self) -> str:
        """The MySQL-protocol host: ``query_host``, else the first frontend's host."""
        return self.query_host or self.fenodes[0].rpartition(":")[0] or self.fenodes[0]

    def to_json(self) -> dict[str, Any]:
        return {"fenodes": list(self.fenodes), "query_port": self.query_port, "username": self.username,
                "password": self.password, "query_host": self.query_host}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Endpoint:
        return cls(tuple(d["fenodes"]), int(d["query_port"]), str(d["username"]), str(d["password"]),
                   str(d.get("query_host") or ""))


__all__ = ["Endpoint"]
