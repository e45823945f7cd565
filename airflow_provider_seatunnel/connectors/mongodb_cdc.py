"""MongoDB-CDC: SeaTunnel's change-stream source of MongoDB, planned but not runnable here.

It plans with SeaTunnel 2.3.8's options and rules (``hosts``, ``database`` and ``collection`` lists,
``username``/``password``, ``connection.options``, ``batch.size``, ``poll.max.batch.size``,
``poll.await.time.ms``, ``heartbeat.interval.ms``, ``incremental.snapshot.chunk.size.mb``,
``startup.mode`` initial or timestamp with ``startup.timestamp``, ``stop.mode`` never), checked at
compile time with located errors, and fails ``validate``: reading a change stream needs a MongoDB
replica set (``$changeStream``), and the server the tests run here (FerretDB) has no change streams,
so no reader of them could be tested; none is shipped.
"""

from __future__ import annotations

from ..spi import SOURCE, Capabilities, Connector
from ..spi.options import JobConfig, PluginConfig, Problem
from ..spi.optionspec import Option, OptionSpec

SPEC = OptionSpec((
    Option("hosts", required=True, allow_blank=False, identity=True,
           description="host:port of the replica set's members, comma-separated."),
    Option("database", "list", required=True, identity=True, description="The databases captured."),
    Option("collection", "list", required=True, identity=True,
           description="The collections captured: <database>.<collection> or a regular expression."),
    Option("username", description="The user."),
    Option("password", secret=True, description="The password."),
    Option("connection.options", description="More connection string options, a=b&c=d."),
    Option("batch.size", "int", 1024, minimum=1, description="Documents per cursor batch."),
    Option("poll.max.batch.size", "int", 1024, minimum=1, description="Change events per poll at most."),
    Option("poll.await.time.ms", "int", 1000, minimum=0, description="Milliseconds a poll waits for events."),
    Option("heartbeat.interval.ms", "int", 0, minimum=0, description="Milliseconds between heartbeats (0: off)."),
    Option("incremental.snapshot.chunk.size.mb", "int", 64, minimum=1,
           description="The snapshot's chunk size in MB."),
    Option("startup.mode", "enum", "initial", choices=("initial", "timestamp"),
           description="initial: snapshot then changes; timestamp: changes from startup.timestamp."),
    Option("startup.timestamp", "long", required_if=(("startup.mode", ("timestamp",)),),
           description="Milliseconds since the epoch to start from (startup.mode timestamp)."),
    Option("stop.mode", "enum", "never", choices=("never",), description="never: read changes until stopped."),
    Option("schema", "map", description="The rows' fields."),
    Option("exactly_once", "bool", False, description="SeaTunnel's exactly-once read of the stream."),
    Option("format", default="DEFAULT", description="The output format of the change events."),
    Option("debezium", "map", description="Debezium properties passed through."),
))

REASON = ("MongoDB-CDC reads MongoDB change streams ($changeStream, a replica set's oplog); the server the tests "
          "run here (FerretDB) has none, so this package ships no untested reader: it plans, but cannot run")


class MongoDBCdc(Connector):
    name = "MongoDB-CDC"
    capabilities = Capabilities(sections=frozenset({SOURCE}))
    option_spec = SPEC
    description = "MongoDB's change streams (planned: options checked; not runnable here, see docs/mongodb.md)."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The options are the spec's; then why it cannot run, at the block (a warning; the planner adds
        the not-runnable one)."""
        if SPEC.valid(plugin.options, plugin.section) is None:
            return []
        problems: list[Problem] = []
        problems.append(job.problem(REASON, plugin, severity="warning",
                                    hint="read the collection with the MongoDB source in a BATCH job instead"))
        return problems


CONNECTOR = MongoDBCdc()
