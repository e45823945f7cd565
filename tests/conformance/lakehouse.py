"""Adapters of the lakehouse sinks: Delta, Paimon and Iceberg (a Hadoop catalog), each table in the test's
directory. What landed is what the table format's reader reads (Spark's Delta and Iceberg readers,
pypaimon). A table gets its earlier row from a first run of the engine (run id ``seed-...``)."""

from __future__ import annotations

from tests.conformance.adapters import SCHEMA, Adapter, Row, Target, by_id, first_wins, not_superseded

#: why no staging check applies to a sink whose attempt writes nothing a table's log references
NOT_IN_THE_LOG = ("an attempt's staged data is referenced by no commit of the table's log until its one "
                  "commit: a reader never sees it, and nothing else marks it as staging")


def seed_through_engine(block) -> object:
    """A seed that writes the earlier row with the sink itself, through the engine (another run id)."""
    def seed(t: Target) -> None:
        from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline

        inp = t.root / f"seed-{t.name}"
        inp.mkdir(parents=True)
        (inp / "old.csv").write_text("-1,old\n")
        plan = t.plan_of(f'source {{ LocalFile {{ plugin_output = "s", path = "{inp}", file_format_type = "csv", '
                         f"{SCHEMA} }} }}\nsink {{ {block(t, 's', '')} }}", name=f"seed-{t.name}.conf")
        run_pipeline(RunContext(t.spark, plan, plan.pipelines[0], f"seed-{t.name}"))
    return seed


def _more(extra: str) -> str:
    return f", {extra}" if extra else ""


# -- Delta -------------------------------------------------------------------------------------------------

def _delta_block(t: Target, plugin_input: str, extra: str) -> str:
    return f'Delta {{ plugin_input = "{plugin_input}", path = "{t.root / t.name}"{_more(extra)} }}'


def _delta_landed(t: Target) -> list[Row]:
    return by_id([r.asDict() for r in t.spark.read.format("delta").load(str(t.root / t.name))
                  .select("id", "name").collect()])


DELTA = Adapter("Delta", seed_through_engine(_delta_block), _delta_block, _delta_landed, lambda t: False,
                not_applicable={"staging": "Delta's staging is Spark's cache in the driver; " + NOT_IN_THE_LOG})


# -- Paimon (a filesystem catalog) --------------------------------------------------------------------------

def _paimon_block(t: Target, plugin_input: str, extra: str) -> str:
    return (f'Paimon {{ plugin_input = "{plugin_input}", warehouse = "{t.root / "wh"}", database = "db", '
            f'table = "{t.name}"{_more(extra)} }}')


def _paimon_landed(t: Target) -> list[Row]:
    import pypaimon

    table = pypaimon.CatalogFactory.create({"warehouse": f"file://{t.root / 'wh'}"}).get_table(f"db.{t.name}")
    builder = table.new_read_builder()
    return by_id(builder.new_read().to_arrow(builder.new_scan().plan().splits()).to_pylist())


PAIMON = Adapter("Paimon", seed_through_engine(_paimon_block), _paimon_block, _paimon_landed, lambda t: False,
                 not_applicable={"staging": "Paimon's staging is data files and their commit messages; "
                                            + NOT_IN_THE_LOG})


# -- Iceberg (a Hadoop catalog) -------------------------------------------------------------------------------

def _iceberg_block(t: Target, plugin_input: str, extra: str) -> str:
    return (f'Iceberg {{ plugin_input = "{plugin_input}", catalog_name = "lake", namespace = "db", '
            f'table = "{t.name}", iceberg.catalog.config = {{ type = "hadoop", warehouse = "file://{t.root / "wh"}" }}'
            f"{_more(extra)} }}")


def _iceberg_landed(t: Target) -> list[Row]:
    from airflow_provider_seatunnel.connectors.iceberg.options import TableRef
    from airflow_provider_seatunnel.connectors.iceberg.tables import identifier
    from tests.runtime.test_iceberg import _catalog

    name = identifier(_catalog(t.spark, t.root / "wh"), TableRef("db", t.name))
    return by_id([r.asDict() for r in t.spark.table(name).select("id", "name").collect()])


def _iceberg_skip() -> str:
    from tests.runtime.test_iceberg import RUNTIME, needs_runtime

    return "" if RUNTIME else needs_runtime.kwargs["reason"]


ICEBERG = Adapter("Iceberg", seed_through_engine(_iceberg_block), _iceberg_block, _iceberg_landed, lambda t: False,
                  not_applicable={"staging": "Iceberg stages on a branch of the table; " + NOT_IN_THE_LOG},
                  fails={**not_superseded("iceberg/sink.py's publish (the snapshot property naming the run's "
                                          "commit; no attempt token is kept, unlike Delta's and Kafka's)"),
                         **first_wins("Iceberg fences by the snapshot property naming the commit (StoreFenced), "
                                      "with no attempt token beside it")},
                  skip=_iceberg_skip())

ADAPTERS = (DELTA, PAIMON, ICEBERG)
