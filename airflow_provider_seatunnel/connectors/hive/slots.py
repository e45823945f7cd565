"""A sink slot: where one (run, pipeline, sink, upstream table) keeps its bookkeeping and staging
under the target table's location, and its attempt tokens (:mod:`..hive.sink` says the layout)."""

from __future__ import annotations

import hashlib
import os
import socket
from dataclasses import dataclass
from datetime import datetime

from ..files.options import safe
from .options import quote_ident
from .records import COMMITS_DIR, STAGING_DIR, TamperedRecord, read, seal
from .store import Store, join


@dataclass(frozen=True)
class Slot:
    """Where one (run, pipeline, sink, table) keeps its bookkeeping and staging."""

    commits: str
    staging: str
    digest: str
    #: the table's location (the records are sealed under their path relative to it)
    location: str = ""

    @property
    def journal(self) -> str:
        return join(self.commits, "journal.json")

    @property
    def marker(self) -> str:
        return join(self.commits, "committed.json")

    @property
    def trash(self) -> str:
        return join(self.commits, "trash")

    def token_file(self, token: int) -> str:
        return join(self.commits, f"token-{token}")

    def staging_dir(self, token: int) -> str:
        return join(self.staging, f"token-{token}")

    def staging_table(self, database: str, token: int) -> str:
        return f"{quote_ident(database)}.{quote_ident(f'st_staging_{self.digest}_{token}')}"


def slot_of(location: str, run_id: str, pipeline: str, sink_ref: str, table: str) -> Slot:
    parts = [safe(run_id), safe(pipeline), safe(sink_ref.replace("[", "-").rstrip("]")), safe(table or "default")]
    digest = hashlib.sha1("/".join(parts).encode()).hexdigest()[:16]
    return Slot(join(location, COMMITS_DIR, *parts), join(location, STAGING_DIR, *parts), digest, location)


def run_tag(run_id: str) -> str:
    """The prefix of every file a run publishes (``overwrite`` keeps the run's own files)."""
    return "st-" + hashlib.sha1(run_id.encode()).hexdigest()[:12]


def newest_token(store: Store, slot: Slot) -> int:
    """The newest attempt token handed out for the slot (0: none yet); its token file must be sealed
    by the table (:class:`~...spi.journals.TamperedRecord` otherwise: a planted ``token-<n>`` would
    fence out every attempt)."""
    numbers = [int(n[len("token-"):]) for n in store.children(slot.commits)
               if n.startswith("token-") and n[len("token-"):].isdigit()]
    newest = max(numbers, default=0)
    if newest:
        record = read(store, slot.location, slot.token_file(newest))
        if record is None or record.get("token") != newest:
            raise TamperedRecord(f"refusing the token file {slot.token_file(newest)}: it does not hold its token")
    return newest


def allocate(store: Store, slot: Slot, attempt: int) -> int:
    """Take the next attempt token: the first ``token-<n>`` above the newest this call creates."""
    token = newest_token(store, slot) + 1
    record = {"attempt": attempt, "pid": os.getpid(), "host": socket.gethostname(), "at": datetime.now().isoformat()}
    while not store.create_new(slot.token_file(token), seal(slot.location, slot.token_file(token),
                                                             {**record, "token": token})):
        token += 1
    return token
