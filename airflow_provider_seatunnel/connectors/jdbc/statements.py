"""The SQL a Jdbc sink's commit runs to move staged rows into the target: an ``INSERT … SELECT``,
an upsert in the dialect's way (:attr:`..sqlclient.dialects.Dialect.upsert`: PostgreSQL, SQLite and Kingbase
``ON CONFLICT … DO UPDATE``, MySQL and OceanBase ``ON DUPLICATE KEY UPDATE``, Oracle, SQL Server,
DB2, Dameng, Xugu, Vertica and SAP HANA ``MERGE`` from the staged rows, IRIS ``INSERT OR UPDATE``,
else delete-then-insert, where SeaTunnel has no native upsert) with DELETE rows deleted, or the
block's own ``query`` made set-based.

The sink's explicit ``query`` (``INSERT … VALUES (?, ?)`` or ``(:name, …)``) runs set-based: the
``VALUES`` list becomes ``SELECT … FROM <staging>`` (placeholders bound to the staged columns,
positionally or by name), in the same commit transaction.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .options import config_error, sink_options
from .target import KIND_COLUMN, Target, resolve_keys


def _scan_sql(sql: str) -> Iterator[tuple[int, str]]:
    """(index, character) of ``sql`` outside quoted strings and identifiers."""
    quote = None
    i = 0
    while i < len(sql):
        ch = sql[i]
        if quote:
            if ch == quote:
                if i + 1 < len(sql) and sql[i + 1] == quote:
                    i += 1
                else:
                    quote = None
        elif ch in "'\"`":
            quote = ch
        else:
            yield i, ch
        i += 1


def values_clause(query: str) -> tuple[str, str, str]:
    """(head, values list, tail) of ``INSERT … VALUES (…) tail``; RuntimeConfigError otherwise."""
    sql = query.strip().rstrip(";").strip()
    if not re.match(r"(?is)^(insert|upsert|replace)\b", sql):
        raise config_error("the sink query must be an INSERT ... VALUES (...) statement (it runs set-based over "
                           "the staged rows)")
    outside = dict(_scan_sql(sql))
    for m in re.finditer(r"(?i)\bvalues\s*\(", sql):
        if m.start() not in outside:
            continue
        depth, close = 0, None
        for i in range(m.end() - 1, len(sql)):
            if i not in outside:
                continue
            if sql[i] == "(":
                depth += 1
            elif sql[i] == ")":
                depth -= 1
                if depth == 0:
                    close = i
                    break
        if close is None:
            break
        tail = sql[close + 1:]
        if tail.lstrip().startswith(","):
            raise config_error("the sink query may insert one row (one VALUES list) per input row")
        return sql[:m.start()], sql[m.end():close], tail
    raise config_error("the sink query must be an INSERT ... VALUES (...) statement")


def _rewrite_query(query: str, columns: list[str], select: Callable[[str], str], staging: str) -> str:
    """The sink ``query`` as ``INSERT … SELECT <values with ? or :name bound to staged columns> FROM staging``."""
    head, values, tail = values_clause(query)
    outside = [i for i, _ in _scan_sql(values)]
    marks = [i for i in outside if values[i] == "?"]
    pieces, last = [], 0
    if marks:
        if len(marks) > len(columns):
            raise config_error(f"the sink query has {len(marks)} '?' placeholders for {len(columns)} fields")
        for n, i in enumerate(marks):
            pieces += [values[last:i], select(columns[n])]
            last = i + 1
    else:
        by_lower = {c.lower(): c for c in columns}
        allowed = set(outside)
        for m in re.finditer(r"(?<![:\w]):([A-Za-z_]\w*)", values):
            if m.start() not in allowed:
                continue
            name = m.group(1) if m.group(1) in columns else by_lower.get(m.group(1).lower())
            if name is None:
                raise config_error(f"the sink query names :{m.group(1)}, which is not an input field")
            pieces += [values[last:m.start()], select(name)]
            last = m.end()
    pieces.append(values[last:])
    return f"{head}SELECT {''.join(pieces)} FROM {staging} s WHERE 1 = 1{tail}"


#: the column numbering the tables of a staging table several tables share (the sink's ``TAG_COLUMN``)
TAG_COLUMN = "__st_table"


def staged_source(target: Target, entry: Mapping[str, Any]) -> str:
    """What the statements read one table's staged rows from: its staging table, or its part of a staging
    table several tables share (the rows numbered ``entry["tag"]``), as a derived table."""
    staging = target.qualified(entry["staging"])
    tag = entry.get("tag")
    if tag is None:
        return staging
    return f"(SELECT * FROM {staging} WHERE {target.dialect.column(TAG_COLUMN)} = {int(tag)})"


def move_statements(target: Target, entry: Mapping[str, Any], config: Mapping[str, Any],
                    no_deletes: bool = False) -> list[str]:
    """The statements moving staged rows into the target (run in the commit transaction); ``no_deletes``:
    the staging holds no DELETE row of the table (counted in this transaction), so the statement
    deleting their keys is left out."""
    dialect = target.dialect
    columns, casts = list(entry["columns"]), dict(entry.get("casts") or {})
    staging = staged_source(target, entry)

    def select(name: str) -> str:
        expr = f"s.{dialect.column(name)}"
        return f"CAST({expr} AS {casts[name]})" if name in casts else expr

    if target.query is not None:
        return [_rewrite_query(target.query, columns, select, staging)]
    names = [dialect.column(target.ide(c)) for c in columns]
    insert = (f"INSERT INTO {target.ident} ({', '.join(names)}) SELECT {', '.join(select(c) for c in columns)} "
              f"FROM {staging} s")
    if not target.primary_keys:
        return [insert]
    moves = _keyed_statements(target, columns, names, staging, insert, select, config)
    return moves[1:] if no_deletes else moves


def _keyed_statements(target: Target, columns: list[str], names: list[str], staging: str, insert: str,
                      select: Callable[[str], str], config: Mapping[str, Any]) -> list[str]:
    """With primary keys: DELETE rows delete (the first statement), then INSERT/UPDATE_AFTER rows are
    upserted (or, with ``enable_upsert = false``, inserted and updated; with
    ``support_upsert_by_insert_only``, inserted)."""
    dialect, ident = target.dialect, target.ident
    kind = f"s.{dialect.column(KIND_COLUMN)}"
    keys = resolve_keys(target.primary_keys, columns)
    key_t = [dialect.column(target.ide(k)) for k in keys]
    others = [(c, n) for c, n in zip(columns, names, strict=True) if c not in keys]
    out = [f"DELETE FROM {ident} WHERE {_staged_keys(target, keys, key_t, staging, '= 3')}"]
    o = sink_options(config)
    if o["support_upsert_by_insert_only"]:
        return [*out, f"{insert} WHERE {kind} IN (0, 2)"]
    if not o["enable_upsert"]:  # INSERT rows inserted, UPDATE_AFTER rows updated
        out.append(f"{insert} WHERE {kind} = 0")
        if others and dialect.upsert == "merge":
            out.append(_merge(target, columns, names, keys, key_t, staging, select, "= 2", insert=False))
        elif others:
            out.append(_update_statement(target, keys, key_t, others, staging, select))
        return out
    if dialect.upsert == "on_conflict":
        action = ("UPDATE SET " + ", ".join(f"{n} = EXCLUDED.{n}" for _, n in others)) if others else "NOTHING"
        return [*out, f"{insert} WHERE {kind} IN (0, 2) ON CONFLICT ({', '.join(key_t)}) DO {action}"]
    if dialect.upsert == "duplicate_key":
        update = ", ".join(f"{n} = VALUES({n})" for _, n in others) or f"{key_t[0]} = {key_t[0]}"
        return [*out, f"{insert} WHERE {kind} IN (0, 2) ON DUPLICATE KEY UPDATE {update}"]
    if dialect.upsert == "merge":
        return [*out, _merge(target, columns, names, keys, key_t, staging, select, "IN (0, 2)")]
    if dialect.upsert == "insert_or_update":  # IRIS: the row of an existing key is updated
        return [*out, f"INSERT OR UPDATE{insert[len('INSERT INTO'):]} WHERE {kind} IN (0, 2)"]
    return [*out, f"DELETE FROM {ident} WHERE {_staged_keys(target, keys, key_t, staging, 'IN (0, 2)')}",
            f"{insert} WHERE {kind} IN (0, 2)"]


def _staged_keys(target: Target, keys: list[str], key_t: list[str], staging: str, kinds: str) -> str:
    """The condition matching the target's rows whose key is among the staged rows of the row kinds
    ``kinds`` (``= 3``, ``IN (0, 2)``): ``key IN (SELECT …)``, or ``EXISTS`` for a composite key where
    the dialect has no row values (SQL Server)."""
    dialect, ident = target.dialect, target.ident
    kind = f"s.{dialect.column(KIND_COLUMN)}"
    if len(keys) > 1 and not dialect.row_values:
        match = " AND ".join(f"s.{dialect.column(k)} = {ident}.{t}" for k, t in zip(keys, key_t, strict=True))
        return f"EXISTS (SELECT 1 FROM {staging} s WHERE {kind} {kinds} AND {match})"
    key_tuple = key_t[0] if len(key_t) == 1 else f"({', '.join(key_t)})"
    key_s = ", ".join(f"s.{dialect.column(k)}" for k in keys)
    return f"{key_tuple} IN (SELECT {key_s} FROM {staging} s WHERE {kind} {kinds})"


def _merge(target: Target, columns: list[str], names: list[str], keys: list[str], key_t: list[str], staging: str,
           select: Callable[[str], str], kinds: str, insert: bool = True) -> str:
    """SeaTunnel's MERGE upsert, set-based: the staged rows of the row kinds ``kinds`` merged into the
    target on the key, the other columns updated where the key exists, the row inserted where it does
    not (``insert``). Oracle, Dameng, Xugu and Vertica write no ``AS`` before the aliases; SQL Server
    ends the statement with ``;``."""
    dialect = target.dialect
    alias = " AS " if dialect.merge_as else " "
    kind = f"s.{dialect.column(KIND_COLUMN)}"
    source = (f"SELECT {', '.join(f'{select(c)} AS {dialect.column(c)}' for c in columns)} "
              f"FROM {staging} s WHERE {kind} {kinds}")
    on = " AND ".join(f"st_target.{t} = st_source.{dialect.column(k)}" for k, t in zip(keys, key_t, strict=True))
    sql = f"MERGE INTO {target.ident}{alias}st_target USING ({source}){alias}st_source ON ({on})"
    sets = [f"{n} = st_source.{dialect.column(c)}" for c, n in zip(columns, names, strict=True) if c not in keys]
    if sets:
        sql += f" WHEN MATCHED THEN UPDATE SET {', '.join(sets)}"
    if insert:
        values = ", ".join(f"st_source.{dialect.column(c)}" for c in columns)
        sql += f" WHEN NOT MATCHED THEN INSERT ({', '.join(names)}) VALUES ({values})"
    return sql + dialect.merge_end


def _update_statement(target: Target, keys: list[str], key_t: list[str], others: list[tuple[str, str]],
                      staging: str, select: Callable[[str], str]) -> str:
    """The UPDATE of the target's rows by the staged UPDATE_AFTER rows of their key."""
    dialect, ident = target.dialect, target.ident
    kind = f"s.{dialect.column(KIND_COLUMN)}"
    match = " AND ".join(f"st_target.{t} = s.{dialect.column(k)}" for t, k in zip(key_t, keys, strict=True))
    if dialect.family in ("postgresql", "sqlite"):  # UPDATE … FROM
        sets = ", ".join(f"{n} = {select(c)}" for c, n in others)
        return f"UPDATE {ident} AS st_target SET {sets} FROM {staging} s WHERE {kind} = 2 AND {match}"
    if dialect.family == "mysql":
        sets = ", ".join(f"st_target.{n} = {select(c)}" for c, n in others)
        return f"UPDATE {ident} st_target JOIN {staging} s ON {match} SET {sets} WHERE {kind} = 2"
    match = " AND ".join(f"{ident}.{t} = s.{dialect.column(k)}" for t, k in zip(key_t, keys, strict=True))
    sets = ", ".join(f"{n} = (SELECT {select(c)} FROM {staging} s WHERE {kind} = 2 AND {match})" for c, n in others)
    return f"UPDATE {ident} SET {sets} WHERE {_staged_keys(target, keys, key_t, staging, '= 2')}"
