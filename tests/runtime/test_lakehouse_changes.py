""":func:`connectors.lakehouse.changes` (the last change per key that the Delta, Iceberg and Paimon sinks
write) on real Spark: a key's rows apply in the order they arrived, across the input's partitions, whether
the engine's arrival column orders them or their position does."""

from __future__ import annotations

from airflow_provider_seatunnel.connectors.lakehouse import changes
from airflow_provider_seatunnel.spi.rows import ARRIVAL, ROW_KIND

INS, UB, UA, D = 0, 1, 2, 3
# (id, name, kind) in arrival order, 3 per input partition: key 3 inserted, deleted two partitions later;
# key 8 inserted, updated, deleted, inserted again; key 9 deleted only; key 2 updated (-U dropped)
LOG = [(1, "a", INS), (3, "c", INS), (8, "h", INS),
       (2, "b", INS), (8, "H", UA), (8, "H", D),
       (3, "c", D), (2, "b", UB), (2, "B", UA),
       (9, "z", D), (8, "i", INS), (4, "d", INS)]
LAST = [(1, "a", INS), (2, "B", UA), (3, "c", D), (4, "d", INS), (8, "i", INS), (9, "z", D)]


def test_the_last_change_per_key_in_arrival_order_across_partitions(spark):
    from pyspark.sql import functions as F

    df = spark.createDataFrame([(i, n, k, pos) for pos, (i, n, k) in enumerate(LOG)],
                               f"id bigint, name string, {ROW_KIND} tinyint, pos bigint")
    # the rows in arrival order over 4 partitions, no arrival column; then shuffled, with the engine's column
    by_position = df.repartitionByRange(4, "pos").sortWithinPartitions("pos").drop("pos")
    shuffled = df.withColumnRenamed("pos", ARRIVAL).repartition(3, F.rand(7))
    for rows in (by_position, shuffled):
        out = changes(rows, ["id"], 2)
        assert out.rdd.getNumPartitions() == 2 and ARRIVAL not in out.columns
        assert sorted(tuple(r) for r in out.select("id", "name", ROW_KIND).collect()) == LAST
