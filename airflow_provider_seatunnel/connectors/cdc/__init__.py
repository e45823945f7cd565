"""The change-data-capture family: what the CDC sources (Postgres-CDC, MySQL-CDC) share: the
source contract and options (:mod:`.source`) and the snapshot-then-changes stream (:mod:`.stream`)."""
