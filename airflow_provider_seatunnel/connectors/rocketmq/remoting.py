"""RocketMQ's remoting protocol, the few commands the connector needs, over plain sockets (no client
library: the only Python client on PyPI wraps a C++ library).

A frame is a big-endian ``int32`` length of what follows, an ``int32`` whose high byte is the header's
serialization (0: JSON) and whose low three bytes are the header's length, the JSON header (``code``,
``opaque``, ``flag``, ``version``, ``language``, ``remark``, ``extFields`` of string values) and the body.
A response carries the request's ``opaque`` and ``flag`` bit 0. Every call has a timeout; a response code
other than those a call expects raises :class:`RemotingError` with the broker's remark.

A message the broker stores, as a pull returns it, is decoded by :func:`decode_messages`: fixed fields,
the body (zlib-inflated when its system flag says so), the topic and the properties (``key\\x01value\\x02``
pairs). Sizes are checked against the frame, so a corrupt frame raises instead of reading past it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import socket
import struct
import threading
import time
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

# request codes
SEND_MESSAGE = 10
PULL_MESSAGE = 11
QUERY_CONSUMER_OFFSET = 14
UPDATE_CONSUMER_OFFSET = 15
UPDATE_AND_CREATE_TOPIC = 17
SEARCH_OFFSET_BY_TIMESTAMP = 29
GET_MAX_OFFSET = 30
GET_MIN_OFFSET = 31
LOCK_BATCH_MQ = 41
UNLOCK_BATCH_MQ = 42
GET_ROUTEINFO_BY_TOPIC = 105
# response codes
SUCCESS = 0
SYSTEM_ERROR = 1
SYSTEM_BUSY = 2
TOPIC_NOT_EXIST = 17
PULL_NOT_FOUND = 19
PULL_RETRY_IMMEDIATELY = 20
PULL_OFFSET_MOVED = 21
QUERY_NOT_FOUND = 22
#: responses a retry may cure (the broker busy or flushing, a slave not available)
TRANSIENT_CODES = frozenset({SYSTEM_ERROR, SYSTEM_BUSY, 10, 11, 12, 13, 14})
#: the topic a broker creates topics from when ``autoCreateTopicEnable`` is on
AUTO_CREATE_TOPIC = "TBW102"
#: a frame larger than this is refused (a pull returns at most a few MiB)
MAX_FRAME = 64 * 1024 * 1024
#: a message's flag in its properties, and the separators of the properties string
PROPERTY_KEYS, PROPERTY_TAGS, PROPERTY_WAIT = "KEYS", "TAGS", "WAIT"
NAME_SEP, PROP_SEP = "\x01", "\x02"
_COMPRESSED = 0x1
_BORN_V6, _STORE_V6 = 0x1 << 4, 0x1 << 5
_MAGIC_V2 = -626843477  # messages whose topic length is two bytes (the older magic has one)

_opaque = itertools.count(1)


class RemotingError(Exception):
    """A failed call: ``code`` is the broker's response code (None for a socket failure or a bad frame)."""

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.code = code

    @property
    def transient(self) -> bool:
        return self.code is None or self.code in TRANSIENT_CODES


@dataclass(frozen=True)
class Response:
    code: int
    remark: str
    ext: Mapping[str, str]
    body: bytes


def encode_frame(code: int, ext: Mapping[str, Any], body: bytes = b"", opaque: int = 0, flag: int = 0) -> bytes:
    """One request frame (JSON header)."""
    header = json.dumps({"code": code, "language": "PYTHON", "version": 0, "opaque": opaque, "flag": flag,
                         "extFields": {k: str(v).lower() if isinstance(v, bool) else str(v)
                                       for k, v in ext.items() if v is not None},
                         "serializeTypeCurrentRPC": "JSON"}).encode()
    return struct.pack(">ii", 4 + len(header) + len(body), len(header) & 0xFFFFFF) + header + body


def decode_frame(frame: bytes) -> tuple[dict[str, Any], bytes]:
    """A frame's header and body (``frame`` without its leading length)."""
    if len(frame) < 4:
        raise RemotingError("a truncated frame")
    (mark,) = struct.unpack_from(">i", frame)
    kind, size = (mark >> 24) & 0xFF, mark & 0xFFFFFF
    if kind != 0:
        raise RemotingError(f"a frame in serialization {kind} (only JSON headers are read)")
    if size > len(frame) - 4:
        raise RemotingError("a frame whose header is longer than the frame")
    try:
        header = json.loads(frame[4:4 + size])
    except ValueError as e:
        raise RemotingError(f"a frame with an unreadable header: {e}") from None
    if not isinstance(header, dict):
        raise RemotingError("a frame whose header is no object")
    return header, frame[4 + size:]


_BARE_KEY = re.compile(rb'([{,])(-?\d+):')


def loads(body: bytes) -> Any:
    """JSON as RocketMQ's fastjson writes it (a map with number keys has them unquoted)."""
    try:
        return json.loads(_BARE_KEY.sub(rb'\1"\2":', body))
    except ValueError as e:
        raise RemotingError(f"an unreadable response body: {e}") from None


class Connection:
    """One TCP connection to a name server or broker; calls are serialized (one in flight)."""

    def __init__(self, addr: str, timeout: float):
        host, _, port = addr.rpartition(":")
        if not host or not port.isdigit():
            raise RemotingError(f"not a host:port address: {addr!r}")
        self.addr = addr
        self.timeout = timeout
        self._lock = threading.Lock()
        try:
            self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        except OSError as e:
            raise RemotingError(f"cannot connect to {addr}: {e}") from None

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def _read(self, n: int) -> bytes:
        chunks, got = [], 0
        while got < n:
            chunk = self.sock.recv(min(n - got, 1 << 20))
            if not chunk:
                raise RemotingError(f"{self.addr} closed the connection")
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def call(self, code: int, ext: Mapping[str, Any], body: bytes = b"", timeout: float | None = None) -> Response:
        """Send a request and wait for its response (``timeout`` seconds, default the connection's)."""
        opaque = next(_opaque) & 0x7FFFFFFF
        with self._lock:
            try:
                self.sock.settimeout(timeout or self.timeout)
                self.sock.sendall(encode_frame(code, ext, body, opaque))
                while True:
                    (length,) = struct.unpack(">i", self._read(4))
                    if not 0 < length <= MAX_FRAME:
                        raise RemotingError(f"{self.addr} sent a frame of {length} bytes")
                    header, payload = decode_frame(self._read(length))
                    if header.get("opaque") == opaque and int(header.get("flag", 0)) & 1:
                        break  # anything else is a request of the broker's own (none is answered)
            except OSError as e:
                self.close()
                raise RemotingError(f"no answer from {self.addr} (request {code}): {e}") from None
        ext_fields = header.get("extFields") or {}
        return Response(int(header.get("code", -1)), str(header.get("remark") or ""),
                        {str(k): str(v) for k, v in ext_fields.items()}, payload)


def expect(response: Response, what: str, *codes: int) -> Response:
    """``response`` if its code is one of ``codes`` (default: success), else :class:`RemotingError`."""
    if response.code in (codes or (SUCCESS,)):
        return response
    remark = response.remark.split("\n")[0][:300]
    raise RemotingError(f"{what}: code {response.code}: {remark}", response.code)


# ------------------------------------------------------------------------------------------------
# messages
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Message:
    """A stored message as a pull returns it."""

    queue_id: int
    queue_offset: int
    born_ms: int
    store_ms: int
    body: bytes
    topic: str
    properties: Mapping[str, str] = field(default_factory=dict)

    @property
    def keys(self) -> str | None:
        return self.properties.get(PROPERTY_KEYS)

    @property
    def tags(self) -> str | None:
        return self.properties.get(PROPERTY_TAGS)


def properties_string(properties: Mapping[str, str]) -> str:
    return "".join(f"{k}{NAME_SEP}{v}{PROP_SEP}" for k, v in properties.items())


def parse_properties(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in text.split(PROP_SEP):
        name, sep, value = pair.partition(NAME_SEP)
        if sep:
            out[name] = value
    return out


class _Reader:
    def __init__(self, data: bytes, start: int, end: int):
        self.data, self.pos, self.end = data, start, end

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise RemotingError("a stored message whose fields run past its size")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> Any:
        values = struct.unpack(">" + fmt, self.take(struct.calcsize(">" + fmt)))
        return values[0] if len(values) == 1 else values


def _decode_one(data: bytes, start: int, size: int, max_body: int) -> Message:
    r = _Reader(data, start + 4, start + size)
    magic, _crc, queue_id, _flag, queue_offset, _physical, sys_flag, born = r.unpack("iiiiqqiq")
    r.take(20 if sys_flag & _BORN_V6 else 8)
    store = r.unpack("q")
    r.take(20 if sys_flag & _STORE_V6 else 8)
    _reconsume, _prepared = r.unpack("iq")
    body = r.take(r.unpack("i"))
    if sys_flag & _COMPRESSED:
        inflater = zlib.decompressobj()
        body = inflater.decompress(body, max_body + 1)
        if len(body) > max_body:
            raise RemotingError(f"a compressed message body inflates past {max_body} bytes")
    topic = r.take(r.unpack("h" if magic == _MAGIC_V2 else "B")).decode("utf-8", "replace")
    props = parse_properties(r.take(r.unpack("h")).decode("utf-8", "replace"))
    return Message(queue_id, queue_offset, born, store, body, topic, props)


def decode_messages(data: bytes, max_body: int = MAX_FRAME) -> Iterator[Message]:
    """The messages of a pull's body, in order."""
    pos = 0
    while pos < len(data):
        if pos + 4 > len(data):
            raise RemotingError("a truncated stored message")
        (size,) = struct.unpack_from(">i", data, pos)
        if size <= 0 or pos + size > len(data):
            raise RemotingError(f"a stored message of {size} bytes in a body of {len(data) - pos}")
        yield _decode_one(data, pos, size, max_body)
        pos += size


def now_ms() -> int:
    return int(time.time() * 1000)
