"""Assert's ``catalog_table_rule`` keys, checked before any data against the keys the plan carries from
the source's ``schema`` through the transforms that keep their columns."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.spi.errors import AssertionFailed, PipelineError

JOB = """
env { job.mode = BATCH }
source {
  FakeSource {
    plugin_output = "users"
    row.num = 3
    schema = {
      table = "db.users"
      fields { id = bigint, name = string, email = string }
      primaryKey { name = "pk_users", columnNames = [id] }
      constraintKeys = [{ constraintName = "uk_email", constraintType = UNIQUE_KEY,
                          constraintColumns = [{ columnName = email, sortType = ASC }] }]
    }
  }
}
transform { Filter { plugin_input = "users", plugin_output = "kept", include_fields = [KEEP] } }
sink { Assert { plugin_input = "kept", rules { catalog_table_rule { RULE } } } }
"""

PK = 'primary_key_rule { primary_key_name = "pk_users", primary_key_columns = [id] }'
UK = ('constraint_key_rule = [{ constraint_key_name = "uk_email", constraint_key_type = UNIQUE_KEY, '
      'constraint_key_columns = [{ constraint_key_column_name = email, constraint_key_sort_type = ASC }] }]')


def job(keep: str, rule: str) -> str:
    return JOB.replace("KEEP", keep).replace("RULE", rule)


def test_declared_keys_hold_through_a_transform_that_keeps_their_columns(run_job):
    [metrics] = run_job(job("id, name, email", f"{PK}\n{UK}"))
    assert metrics["per_table"] == {"sink[0] Assert": {"db.users": 3}}


def test_a_wrong_key_name_or_columns_fail_before_any_data(run_job):
    with pytest.raises(PipelineError) as info:
        run_job(job("id, name, email", 'primary_key_rule { primary_key_name = "pk", primary_key_columns = [id] }'))
    assert isinstance(info.value, AssertionFailed)
    assert "primaryKey: pk_users is not equal to pk" in info.value.cause
    with pytest.raises(PipelineError) as info:
        run_job(job("id, name, email", 'primary_key_rule { primary_key_name = "pk_users", '
                                       'primary_key_columns = [name] }'))
    assert "primaryKey columns: [id] is not equal to [name]" in info.value.cause


def test_a_key_whose_column_a_transform_dropped_is_gone(run_job):
    with pytest.raises(PipelineError) as info:
        run_job(job("id, name", f"{PK}\n{UK}"))
    assert "constraintKeys is null" in info.value.cause
    assert "primaryKey" not in info.value.cause  # the primary key's column was kept


def test_a_jdbc_sources_keys_come_from_the_database(run_job, db):
    """A Jdbc table's keys are known only at run time: the source reads them from the database's
    catalog (primary key, other indexes as constraint keys) and the columns carry them to Assert."""
    db.sql("CREATE TABLE keyed (id int CONSTRAINT pk_keyed PRIMARY KEY, email text, city text); "
           "CREATE UNIQUE INDEX uk_keyed_email ON keyed (email); "
           "INSERT INTO keyed VALUES (1, 'a@x', 'p'), (2, 'b@x', 'q')")
    conn = (f'url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}", '
            f'password = "{db.password}"')
    unique = ('constraint_key_rule = [{ constraint_key_name = "uk_keyed_email", constraint_key_type = UNIQUE_KEY, '
              'constraint_key_columns = [{ constraint_key_column_name = email, constraint_key_sort_type = ASC }] }]')
    text = f"""
env {{ job.mode = BATCH }}
source {{ Jdbc {{ {conn}, table_path = "public.keyed", plugin_output = "k" }} }}
transform {{ Filter {{ plugin_input = "k", plugin_output = "kept", include_fields = [KEEP] }} }}
sink {{ Assert {{ plugin_input = "kept", rules {{ catalog_table_rule {{ RULE }} }} }} }}
"""
    pk = 'primary_key_rule { primary_key_name = "pk_keyed", primary_key_columns = [id] }'
    [metrics] = run_job(text.replace("KEEP", "id, email, city").replace("RULE", f"{pk}\n{unique}"))
    assert sum(metrics["per_table"]["sink[0] Assert"].values()) == 2
    with pytest.raises(AssertionFailed, match="primaryKey: pk_keyed is not equal to pk_other"):
        run_job(text.replace("KEEP", "id, email").replace("RULE", pk.replace('"pk_keyed"', '"pk_other"')))
    with pytest.raises(AssertionFailed, match="primaryKey is null"):  # the key's column was dropped
        run_job(text.replace("KEEP", "email, city").replace("RULE", pk))
