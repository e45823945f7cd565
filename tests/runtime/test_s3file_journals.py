"""S3File's commit records (fence, pending index) on a real S3 endpoint (moto, tests/s3_server.py):
a planted, edited or escaping record is refused before anything is copied or deleted, readers
do not let an unsealed record hide objects, and a legit interrupted commit still rolls forward."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.files import s3options as options
from airflow_provider_seatunnel.connectors.files import storecommits as commits
from airflow_provider_seatunnel.connectors.files.bucket import open_bucket
from airflow_provider_seatunnel.spi.journals import TamperedRecord, seal
from airflow_provider_seatunnel.spi.twophase import CommitId, Staged
from tests import s3_server


@pytest.fixture(scope="module")
def s3():
    with s3_server.running() as server:
        yield server


def target(s3, bucket: str, secret: str | None = s3_server.SECRET_KEY):
    s = options.S3Settings(bucket=bucket, prefix="out", endpoint=s3.endpoint, region=s3_server.REGION,
                           path_style=True, provider=None, access_key=s3_server.ACCESS_KEY, secret_key=secret)
    store = open_bucket(s)
    return s, store, commits.slot_keys(s, "run1", "p0", "S3File[0]", "t", "run1")


def put(s3, bucket: str, key: str, body: bytes | dict) -> None:
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    s3.client().put_object(Bucket=bucket, Key=key, Body=data)


def escaping_commit(keys, outside: str) -> dict:
    return {"token": 1, "commit": {"token": 1, "moves": [[outside, "out/stolen.csv"]], "drops": [],
                                   "done": False, "staging": keys["staging"] + "token-1/",
                                   "pending": commits.pending_key(keys, 1), "run_id": "run1", "table": "t"}}


def test_a_planted_unsealed_fence_is_refused_and_nothing_is_copied(s3):
    bucket = s3.new_bucket()
    _, store, keys = target(s3, bucket)
    put(s3, bucket, "private/secret.csv", b"1,secret\n")
    put(s3, bucket, keys["fence"], escaping_commit(keys, "private/secret.csv"))
    with pytest.raises(TamperedRecord, match="not a sealed record"):
        commits.take_token(store, keys)
    assert s3.keys(bucket) == sorted(["private/secret.csv", keys["fence"]])


def test_a_sealed_fence_naming_keys_outside_the_target_is_refused(s3):
    bucket = s3.new_bucket()
    _, store, keys = target(s3, bucket)
    put(s3, bucket, "private/secret.csv", b"1,secret\n")
    put(s3, bucket, "keep/a.csv", b"a\n")
    key = commits.journal_key(store, "out")
    for record in (escaping_commit(keys, "private/secret.csv"),  # a staged key outside the staging
                   {**escaping_commit(keys, keys["staging"] + "token-1/data/x"),
                    "commit": {**escaping_commit(keys, keys["staging"] + "token-1/data/x")["commit"],
                               "drops": ["keep/a.csv"]}},  # a drop outside the target
                   {**escaping_commit(keys, "x"), "commit": {**escaping_commit(keys, "x")["commit"], "moves": [],
                                                             "staging": "keep/"}}):  # staging elsewhere
        put(s3, bucket, keys["fence"], seal(record, key, keys["fence"][len("out/"):]))
        with pytest.raises(TamperedRecord, match="outside its target"):
            commits.take_token(store, keys)
        assert s3.keys(bucket) == sorted(["private/secret.csv", "keep/a.csv", keys["fence"]])


def test_an_edited_sealed_record_is_refused(s3):
    bucket = s3.new_bucket()
    _, store, keys = target(s3, bucket)
    assert commits.take_token(store, keys) == (None, 1)
    raw = json.loads(s3.client().get_object(Bucket=bucket, Key=keys["fence"])["Body"].read())
    assert set(raw) == {"v", "body", "mac"}
    raw["body"]["token"] = 41
    put(s3, bucket, keys["fence"], raw)
    with pytest.raises(TamperedRecord, match="seal does not match"):
        commits.take_token(store, keys)
    # a record sealed for another target (another secret) does not pass either
    _, other, other_keys = target(s3, bucket, secret="another-secret")
    with pytest.raises(TamperedRecord, match="seal does not match"):
        commits.newest_token(other, other_keys)


def test_readers_do_not_let_an_unsealed_pending_record_hide_objects(s3):
    bucket = s3.new_bucket()
    _, store, keys = target(s3, bucket)
    put(s3, bucket, "out/data.csv", b"1\n")
    put(s3, bucket, keys["fence"], {"token": 1, "commit": None})
    put(s3, bucket, commits.pending_key(keys, 1), {"token": 1, "fence": keys["fence"], "finals": ["out/data.csv"]})
    assert commits.hidden_keys(store, "out") == set()


def test_a_legit_interrupted_commit_rolls_forward_and_its_finals_are_hidden_meanwhile(s3):
    bucket = s3.new_bucket()
    s, store, keys = target(s3, bucket)
    _, token = commits.take_token(store, keys)
    staging = commits.staging_prefix(keys, token)
    put(s3, bucket, staging + "data/part-0.csv", b"1\n2\n")
    staged = Staged(CommitId("run1", "p0", "S3File[0]", "t"), token, "table t", -1,
                    ((staging + "data/part-0.csv", 4),), {"moves": [[staging + "data/part-0.csv", "out/part-0.csv"]]})

    def killed() -> None:
        raise KeyboardInterrupt("killed after its commit record")

    with pytest.raises(KeyboardInterrupt):
        commits.commit_table(store, s, staged, keys, "S3File[0]", killed, commits._nothing)
    assert commits.hidden_keys(store, "out") == {"out/part-0.csv"}
    assert commits.take_token(store, keys) == ("recovered", 0)
    assert s3.client().get_object(Bucket=bucket, Key="out/part-0.csv")["Body"].read() == b"1\n2\n"
    assert commits.hidden_keys(store, "out") == set() and not s3.keys(bucket, staging)


def test_without_a_secret_the_records_are_refused_unless_journal_key_is_set(s3, monkeypatch):
    bucket = s3.new_bucket()
    _, store, keys = target(s3, bucket)
    store.journal_secret = None
    monkeypatch.delenv("SEATUNNEL_JOURNAL_KEY", raising=False)
    monkeypatch.delenv("AIRFLOW__SEATUNNEL__JOURNAL_KEY", raising=False)
    with pytest.raises(TamperedRecord, match="journal_key"):
        commits.take_token(store, keys)
    monkeypatch.setenv("SEATUNNEL_JOURNAL_KEY", "one-value-on-every-worker")
    assert commits.take_token(store, keys) == (None, 1)
