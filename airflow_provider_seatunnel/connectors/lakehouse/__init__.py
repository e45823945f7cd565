"""The lakehouse family: what the Delta, Iceberg and Paimon sinks share: key columns and the last
change per key (:mod:`.changes`), and committing and releasing the tables ``prepare`` staged
(:mod:`.staged`)."""
