"""Assert's checks at the end of a STREAMING run: ``row_rules``, ``table-names`` and the tables of
``tables_configs`` against the rows all the run's micro-batches carried. (The field and catalog rules
hold per micro-batch and were checked on each, by :mod:`.batch`.)
"""

from __future__ import annotations

from collections.abc import Mapping

from .batch import Failure, table_names_failures
from .rules import Rules, TableRules
from .values import num_text


def stream_failures(rules: Rules, written: Mapping[str, int]) -> list[Failure]:
    """The run-wide rules the run broke, given the rows written per table (``written``)."""
    failures: list[Failure] = []
    for table, count in written.items():
        for rule in (rules.for_table(table) or TableRules()).row_rules:
            if rule.broken_by(count):
                failures.append((table, f"row count {count} over the run's micro-batches fails rule "
                                        f"{rule.rule_type} {num_text(rule.rule_value)}"))
    for path, table_rules in rules.tables.items():
        if path in written:
            continue
        if table_rules.catalog is not None:
            failures.append((path, "catalog_table_rule: the input has no such table (its tables: "
                                   + ", ".join(written) + ")"))
        failures += [(path, f"row count 0 fails rule {rule.rule_type} {num_text(rule.rule_value)} "
                            "(no such input table)")
                     for rule in table_rules.row_rules if rule.broken_by(0)]
    failures += table_names_failures(rules, written)
    return failures
