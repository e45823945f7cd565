"""A RocketMQ client of the commands the connector uses (:mod:`.remoting`): topic routes from the name
servers, send, pull, a queue's offsets (min, max, by timestamp), consumer-group offsets, topic creation and
the broker's queue locks (the sink's fence).

A :class:`Client` keeps one connection per address and closes them all on :meth:`Client.close`; addresses
of ``name.srv.addr`` are tried in order. Failures raise :class:`.remoting.RemotingError` (``transient``
says whether a retry may cure it); :func:`error_of` turns one into the connector's error naming what it was
doing.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ...spi.errors import PipelineError, RuntimeConfigError
from . import remoting as r


@dataclass(frozen=True, order=True)
class Queue:
    """One message queue of a topic on a broker."""

    topic: str
    broker: str
    queue_id: int

    def to_json(self) -> dict[str, Any]:
        return {"topic": self.topic, "brokerName": self.broker, "queueId": self.queue_id}


@dataclass(frozen=True)
class Route:
    """A topic's queues and the master address of each broker holding some."""

    queues: tuple[Queue, ...]
    write_queues: tuple[Queue, ...]
    masters: dict[str, str]


def error_of(e: r.RemotingError, doing: str) -> PipelineError:
    """The connector's error: transient failures retry (PipelineError), the rest do not."""
    cause = f"{doing}: {e}"
    return PipelineError(cause) if e.transient else RuntimeConfigError(cause)


class Client:
    """Calls to the name servers and brokers of one cluster (``timeout`` seconds per call)."""

    def __init__(self, name_servers: Sequence[str], timeout: float = 10.0, client_id: str | None = None):
        if not name_servers:
            raise r.RemotingError("no name server address")
        self.name_servers = list(name_servers)
        self.timeout = timeout
        self.client_id = client_id or f"{socket.gethostname()}@seatunnel"
        self._conns: dict[str, r.Connection] = {}

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def _conn(self, addr: str) -> r.Connection:
        conn = self._conns.get(addr)
        if conn is None:
            conn = self._conns[addr] = r.Connection(addr, self.timeout)
        return conn

    def call(self, addr: str, code: int, ext: dict[str, Any], body: bytes = b"",
             timeout: float | None = None) -> r.Response:
        try:
            return self._conn(addr).call(code, ext, body, timeout)
        except r.RemotingError:
            self._conns.pop(addr, None)
            raise

    # routes ------------------------------------------------------------------------------------

    def route(self, topic: str) -> Route | None:
        """The topic's route, or None when no name server knows the topic."""
        last: r.RemotingError | None = None
        for addr in self.name_servers:
            try:
                resp = self.call(addr, r.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
            except r.RemotingError as e:
                last = e
                continue
            if resp.code == r.TOPIC_NOT_EXIST:
                return None
            return _route(topic, r.loads(r.expect(resp, f"route of topic {topic!r}").body))
        assert last is not None
        raise last

    # offsets -----------------------------------------------------------------------------------

    def _offset(self, q: Queue, addr: str, code: int, what: str, **ext: Any) -> int:
        resp = r.expect(self.call(addr, code, {"topic": q.topic, "queueId": q.queue_id, **ext}), what)
        return int(resp.ext.get("offset", "0"))

    def min_offset(self, q: Queue, addr: str) -> int:
        return self._offset(q, addr, r.GET_MIN_OFFSET, f"min offset of {q}")

    def max_offset(self, q: Queue, addr: str) -> int:
        return self._offset(q, addr, r.GET_MAX_OFFSET, f"max offset of {q}")

    def offset_at(self, q: Queue, addr: str, timestamp_ms: int) -> int:
        """The first offset stored at or after ``timestamp_ms`` (the max offset when none is)."""
        return self._offset(q, addr, r.SEARCH_OFFSET_BY_TIMESTAMP, f"offset by time of {q}",
                            timestamp=timestamp_ms)

    def group_offset(self, q: Queue, addr: str, group: str) -> int | None:
        """The consumer group's committed offset of the queue, or None when it has none."""
        resp = self.call(addr, r.QUERY_CONSUMER_OFFSET, {"consumerGroup": group, "topic": q.topic,
                                                         "queueId": q.queue_id})
        if resp.code == r.QUERY_NOT_FOUND:
            return None
        value = int(r.expect(resp, f"offset of group {group!r} on {q}").ext.get("offset", "-1"))
        return None if value < 0 else value

    def commit_offset(self, q: Queue, addr: str, group: str, offset: int) -> None:
        r.expect(self.call(addr, r.UPDATE_CONSUMER_OFFSET, {"consumerGroup": group, "topic": q.topic,
                                                            "queueId": q.queue_id, "commitOffset": offset}),
                 f"commit of group {group!r} offset {offset} on {q}")

    # pull and send -----------------------------------------------------------------------------

    def pull(self, q: Queue, addr: str, group: str, offset: int, max_messages: int,
             tags: str = "*") -> tuple[list[r.Message], int]:
        """Messages of the queue from ``offset`` (at most ``max_messages``) and the next offset to pull;
        an empty list once ``offset`` reached the queue's end. Only messages whose tag ``tags`` names
        (``a || b``; ``*``: all) come back; the next offset skips the others."""
        ext = {"consumerGroup": group, "topic": q.topic, "queueId": q.queue_id, "queueOffset": offset,
               "maxMsgNums": max_messages, "sysFlag": 4, "commitOffset": 0, "suspendTimeoutMillis": 0,
               "subscription": tags, "subVersion": 0, "expressionType": "TAG"}
        resp = self.call(addr, r.PULL_MESSAGE, ext)
        resp = r.expect(resp, f"pull of {q} at {offset}", r.SUCCESS, r.PULL_NOT_FOUND, r.PULL_RETRY_IMMEDIATELY,
                        r.PULL_OFFSET_MOVED)
        next_offset = int(resp.ext.get("nextBeginOffset", offset))
        if resp.code == r.PULL_OFFSET_MOVED:
            raise r.RemotingError(f"pull of {q} at {offset}: the offset is out of the queue's range "
                                  f"[{resp.ext.get('minOffset')}, {resp.ext.get('maxOffset')})", resp.code)
        if resp.code != r.SUCCESS:
            return [], next_offset
        return list(r.decode_messages(resp.body)), next_offset

    def send(self, q: Queue, addr: str, group: str, body: bytes, keys: str | None = None,
             tags: str | None = None, timeout: float | None = None) -> int:
        """Store one message in the queue (waiting for the store); its queue offset."""
        props = {r.PROPERTY_WAIT: "true"}
        if keys:
            props[r.PROPERTY_KEYS] = keys
        if tags:
            props[r.PROPERTY_TAGS] = tags
        ext = {"producerGroup": group, "topic": q.topic, "defaultTopic": r.AUTO_CREATE_TOPIC,
               "defaultTopicQueueNums": 4, "queueId": q.queue_id, "sysFlag": 0, "bornTimestamp": r.now_ms(),
               "flag": 0, "properties": r.properties_string(props), "reconsumeTimes": 0, "unitMode": False,
               "batch": False}
        resp = r.expect(self.call(addr, r.SEND_MESSAGE, ext, body, timeout), f"send to {q}")
        return int(resp.ext.get("queueOffset", "-1"))

    def create_topic(self, addr: str, topic: str, queues: int) -> None:
        ext = {"topic": topic, "defaultTopic": r.AUTO_CREATE_TOPIC, "readQueueNums": queues,
               "writeQueueNums": queues, "perm": 6, "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0,
               "order": False}
        r.expect(self.call(addr, r.UPDATE_AND_CREATE_TOPIC, ext), f"creation of topic {topic!r}")

    # locks -------------------------------------------------------------------------------------

    def lock(self, addr: str, group: str, queues: Iterable[Queue]) -> set[Queue]:
        """Lock the queues for this client in ``group`` (a lock held by another client id is refused
        until it expires, 60 s after its holder last locked it); the queues locked."""
        body = json.dumps({"consumerGroup": group, "clientId": self.client_id, "onlyThisBroker": True,
                           "mqSet": [q.to_json() for q in queues]}).encode()
        resp = r.expect(self.call(addr, r.LOCK_BATCH_MQ, {}, body), f"lock of group {group!r}")
        got = r.loads(resp.body).get("lockOKMQSet") or [] if resp.body else []
        return {Queue(str(m["topic"]), str(m["brokerName"]), int(m["queueId"])) for m in got}

    def unlock(self, addr: str, group: str, queues: Iterable[Queue]) -> None:
        body = json.dumps({"consumerGroup": group, "clientId": self.client_id, "onlyThisBroker": True,
                           "mqSet": [q.to_json() for q in queues]}).encode()
        r.expect(self.call(addr, r.UNLOCK_BATCH_MQ, {}, body), f"unlock of group {group!r}")


def _route(topic: str, data: Any) -> Route:
    if not isinstance(data, dict):
        raise r.RemotingError(f"route of topic {topic!r}: not an object")
    masters: dict[str, str] = {}
    for broker in data.get("brokerDatas") or []:
        addrs = broker.get("brokerAddrs") or {}
        master = addrs.get("0") or addrs.get(0)
        if master:
            masters[str(broker["brokerName"])] = str(master)
    readable, writable = [], []
    for qd in sorted(data.get("queueDatas") or [], key=lambda d: str(d.get("brokerName"))):
        name = str(qd.get("brokerName"))
        if name not in masters:
            continue
        perm = int(qd.get("perm", 6))
        if perm & 4:
            readable += [Queue(topic, name, i) for i in range(int(qd.get("readQueueNums", 0)))]
        if perm & 2:
            writable += [Queue(topic, name, i) for i in range(int(qd.get("writeQueueNums", 0)))]
    return Route(tuple(readable), tuple(writable), masters)


def java_hash(text: str) -> int:
    """Java's ``String.hashCode`` (UTF-16 code units), as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def queue_for_key(key: str, queues: int) -> int:
    """The queue SeaTunnel's sink picks for a message key (select-by-hash: ``|hashCode| % queues``)."""
    return abs(java_hash(key)) % queues
