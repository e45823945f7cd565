"""A small STOMP 1.2 client over one TCP socket (the standard library only): what the ActiveMQ sink needs.

ActiveMQ Classic speaks STOMP on a ``stomp://`` port and on an ``auto://`` port (the transport that also takes
OpenWire, SeaTunnel's ``tcp://`` protocol). Frames are ``COMMAND\\n`` headers ``\\n\\n`` body ``\\0``; header
values are escaped as STOMP 1.2 says. A SEND carries no ``content-length`` so that ActiveMQ stores a text message
(a JMS ``TextMessage``, as SeaTunnel's sink sends), which is why bodies must hold no NUL byte (JSON text never
does). Frames received are read incrementally: nothing is read whole beyond one frame, and a frame larger than
:data:`MAX_FRAME` fails the read.

Errors: :class:`StompError`; ``transient`` is true for network failures (the engine retries) and false for a
refusal the broker states (bad credentials, an ``ERROR`` frame), except a client id in use (another attempt
holds it: transient).
"""

from __future__ import annotations

import contextlib
import socket
import uuid
from collections import deque
from dataclasses import dataclass, field

#: the largest frame read (a message body with its headers)
MAX_FRAME = 64 * 1024 * 1024
_ESCAPES = (("\\", "\\\\"), ("\r", "\\r"), ("\n", "\\n"), (":", "\\c"))


class StompError(RuntimeError):
    """A STOMP failure; ``transient``: worth retrying (the network, a client id another connection holds)."""

    def __init__(self, message: str, transient: bool = False):
        super().__init__(message)
        self.transient = transient


@dataclass
class Frame:
    command: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def _escape(value: str) -> str:
    for raw, escaped in _ESCAPES:
        value = value.replace(raw, escaped)
    return value


def _unescape(value: str) -> str:
    out, i = [], 0
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value):
            out.append({"\\": "\\", "r": "\r", "n": "\n", "c": ":"}.get(value[i + 1], value[i + 1]))
            i += 2
        else:
            out.append(value[i])
            i += 1
    return "".join(out)


def encode(frame: Frame) -> bytes:
    """The frame's bytes (headers escaped; the body as given, then NUL)."""
    if b"\0" in frame.body and "content-length" not in frame.headers:
        raise StompError("a STOMP text message cannot hold a NUL byte")
    head = frame.command + "\n" + "".join(f"{_escape(k)}:{_escape(v)}\n" for k, v in frame.headers.items()) + "\n"
    return head.encode("utf-8") + frame.body + b"\0"


class Stomp:
    """One STOMP connection: :meth:`connect`, then sends, transactions, subscriptions; a context manager."""

    def __init__(self, host: str, port: int, login: str | None = None, passcode: str | None = None,
                 client_id: str | None = None, timeout: float = 30.0):
        self.host, self.port, self.timeout = host, port, timeout
        self._login, self._passcode, self.client_id = login, passcode, client_id
        self._sock: socket.socket | None = None
        self._buf = bytearray()
        self._pending: deque[Frame] = deque()

    # connection ----------------------------------------------------------------------------------

    def connect(self) -> Stomp:
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except OSError as e:
            raise StompError(f"cannot connect to {self.host}:{self.port}: {e}", transient=True) from None
        headers = {"accept-version": "1.2", "host": self.host, "heart-beat": "0,0"}
        if self._login is not None:
            headers["login"] = self._login
            headers["passcode"] = self._passcode or ""
        if self.client_id:
            headers["client-id"] = self.client_id
        # CONNECT headers are not escaped (STOMP 1.2)
        head = "CONNECT\n" + "".join(f"{k}:{v}\n" for k, v in headers.items()) + "\n"
        self._write(head.encode("utf-8") + b"\0")
        frame = self._read(self.timeout)
        if frame is None or frame.command != "CONNECTED":
            message = frame.headers.get("message", "") if frame is not None else "no answer"
            in_use = "already connected" in message or "InvalidClientID" in message
            self.close()
            raise StompError(f"the broker refused the connection: {message}", transient=in_use)
        return self

    def __enter__(self) -> Stomp:
        return self.connect() if self._sock is None else self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Disconnect (without waiting for a receipt) and close the socket; an open transaction is rolled back
        by the broker."""
        sock, self._sock = self._sock, None
        if sock is None:
            return
        with contextlib.suppress(OSError):
            sock.sendall(encode(Frame("DISCONNECT")))
        sock.close()

    # frames ----------------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        if self._sock is None:
            raise StompError("not connected", transient=True)
        try:
            self._sock.sendall(data)
        except OSError as e:
            raise StompError(f"lost the connection to {self.host}:{self.port}: {e}", transient=True) from None

    def send_frame(self, frame: Frame) -> None:
        self._write(encode(frame))

    def _frame_in_buffer(self) -> Frame | None:
        while self._buf[:1] in (b"\n", b"\r"):  # heart-beats
            del self._buf[:1]
        end = self._buf.find(b"\n\n")
        if end < 0:
            return None
        lines = self._buf[:end].decode("utf-8").replace("\r", "").split("\n")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            key, _, value = line.partition(":")
            headers.setdefault(_unescape(key), _unescape(value))
        start = end + 2
        if "content-length" in headers:
            stop = start + int(headers["content-length"])
            if len(self._buf) < stop + 1:
                return None
        else:
            stop = self._buf.find(b"\0", start)
            if stop < 0:
                return None
        body = bytes(self._buf[start:stop])
        del self._buf[:stop + 1]
        return Frame(lines[0], headers, body)

    def _read(self, timeout: float | None) -> Frame | None:
        """The next frame from the socket, None when none came within ``timeout`` seconds."""
        assert self._sock is not None
        while True:
            frame = self._frame_in_buffer()
            if frame is not None:
                return frame
            if len(self._buf) > MAX_FRAME:
                raise StompError(f"a frame from {self.host}:{self.port} exceeds {MAX_FRAME} bytes")
            self._sock.settimeout(timeout)
            try:
                chunk = self._sock.recv(1 << 16)
            except TimeoutError:
                return None
            except OSError as e:
                raise StompError(f"lost the connection to {self.host}:{self.port}: {e}", transient=True) from None
            if not chunk:
                raise StompError(f"the broker at {self.host}:{self.port} closed the connection", transient=True)
            self._buf += chunk

    def _checked(self, frame: Frame) -> Frame:
        if frame.command == "ERROR":
            detail = frame.headers.get("message", "") + (": " + frame.body.decode("utf-8", "replace").strip()
                                                         if frame.body else "")
            raise StompError(f"the broker answered ERROR: {detail[:500]}")
        return frame

    def receive(self, timeout: float | None = None) -> Frame | None:
        """The next MESSAGE (or other frame) the broker sent, None after ``timeout`` seconds without one."""
        if self._pending:
            return self._pending.popleft()
        frame = self._read(self.timeout if timeout is None else timeout)
        return None if frame is None else self._checked(frame)

    def request(self, frame: Frame) -> None:
        """Send ``frame`` asking for a receipt and wait for it (frames received meanwhile are kept)."""
        receipt = uuid.uuid4().hex
        frame.headers["receipt"] = receipt
        self.send_frame(frame)
        while True:
            answer = self._read(self.timeout)
            if answer is None:
                raise StompError(f"no receipt from {self.host}:{self.port} within {self.timeout:.0f} s",
                                 transient=True)
            answer = self._checked(answer)
            if answer.command == "RECEIPT" and answer.headers.get("receipt-id") == receipt:
                return
            self._pending.append(answer)

    # verbs -----------------------------------------------------------------------------------

    def send(self, destination: str, body: bytes, transaction: str | None = None,
             headers: dict[str, str] | None = None, receipt: bool = False) -> None:
        frame = Frame("SEND", {"destination": destination, **(headers or {})}, body)
        if transaction:
            frame.headers["transaction"] = transaction
        self.request(frame) if receipt else self.send_frame(frame)

    def begin(self) -> str:
        tx = "tx-" + uuid.uuid4().hex
        self.send_frame(Frame("BEGIN", {"transaction": tx}))
        return tx

    def commit(self, tx: str) -> None:
        """Commit ``tx`` and wait for the broker's receipt: once this returns, the transaction is done."""
        self.request(Frame("COMMIT", {"transaction": tx}))

    def abort(self, tx: str) -> None:
        self.send_frame(Frame("ABORT", {"transaction": tx}))

    def subscribe(self, destination: str, sub_id: str, ack: str = "client-individual",
                  headers: dict[str, str] | None = None) -> None:
        self.request(Frame("SUBSCRIBE", {"destination": destination, "id": sub_id, "ack": ack, **(headers or {})}))

    def unsubscribe(self, sub_id: str) -> None:
        self.request(Frame("UNSUBSCRIBE", {"id": sub_id}))

    def ack(self, message: Frame, transaction: str | None = None) -> None:
        frame = Frame("ACK", {"id": message.headers.get("ack") or message.headers.get("message-id", "")})
        if transaction:
            frame.headers["transaction"] = transaction
        self.send_frame(frame)


def queue(name: str) -> str:
    """ActiveMQ's STOMP destination of the queue ``name``."""
    return "/queue/" + name
