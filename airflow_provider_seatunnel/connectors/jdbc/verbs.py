"""The Jdbc sink as the storage verbs the engine's two phases run over (:mod:`.sink`: one table's
staging; :mod:`.shared`: several tables' one write; :mod:`.bulk` and :mod:`.commit`: the commit)."""

from __future__ import annotations

from typing import Any

from ...spi import RunContext, Vertex
from ...spi.twophase import CommitId, Staged
from ..sqlclient.connection import connect
from .bulk import publish_tables
from .commit import drop_quietly, drop_staging, publish_table, retire_table
from .schemachange import FOLLOWS
from .shared import stage_key, stage_shared, stage_tables, stages_every_row
from .sink import _OLDER_STAGING, JdbcCommitLog, stage_table, staging_name
from .target import target_of


class JdbcSinkVerbs:
    """The Jdbc sink as storage verbs (see :mod:`.sink` for what each does)."""

    follows_schema_changes = FOLLOWS
    commit_log = staticmethod(JdbcCommitLog)

    stage = staticmethod(stage_table)
    #: several tables of one key share one staging write (:class:`...spi.twophase.StagesTogether`)
    stage_key = staticmethod(stage_key)
    stage_together = staticmethod(stage_tables)
    #: the tables of a group a source read together, staged from the group's DataFrame
    #: (:class:`...spi.together.StagesShared`)
    stage_shared = staticmethod(stage_shared)
    #: and says when that write stages every row it is given (:class:`...spi.together.StagesEveryRow`)
    stages_every_row = staticmethod(stages_every_row)
    publish = staticmethod(publish_table)
    #: the engine commits every table in one call (:class:`...spi.twophase.PublishesTogether`): one
    #: transaction per database for all its tables
    publish_all = staticmethod(publish_tables)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        _, target = target_of(vertex.config, staged.commit.table, None)
        drop_staging(ctx, target, str(staged.detail.get("staging") or staging_name(staged.commit, staged.token)))

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        """Drop the staging tables of the last :data:`_OLDER_STAGING` tokens (attempts that died)."""
        if token <= 1:  # no earlier attempt
            return 0
        _, target = target_of(vertex.config, commit.table, None)
        with connect(ctx.spark, target.conn) as connection:
            for older in range(max(1, token - _OLDER_STAGING), token):
                drop_quietly(connection, target.qualified(staging_name(commit, older)))
        return 0  # a DROP TABLE does not say whether the table existed


    def retire(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        """STREAMING: micro-batch ``ctx.batch_id`` committed; delete the commit-log rows of the
        stream's earlier micro-batches, which Spark will never replay."""
        stream = getattr(ctx, "stream_id", "")
        for staged in info.tables if stream else ():
            retire_table(ctx, vertex, staged, stream)
