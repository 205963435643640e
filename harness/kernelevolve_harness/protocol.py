"""The private channel between the judge and a worker: a pipe pair the worker's code inherits by number.

A message is a 4-byte length, a JSON header, then the binary blobs the header lists (npy-encoded arrays).
The worker's stdout/stderr go to a log file, so nothing the candidate prints can reach this channel.
"""
from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any, Dict, List, Optional, Tuple

_LEN = struct.Struct(">Q")
MAX_HEADER = 64 << 20


class ChannelClosed(Exception):
    """The other end is gone (the worker exited or crashed)."""


class ChannelTimeout(Exception):
    pass


class Channel:
    def __init__(self, read_fd: int, write_fd: int) -> None:
        self.read_fd = read_fd
        self.write_fd = write_fd

    def send(self, header: Dict[str, Any], blobs: Optional[List[bytes]] = None) -> None:
        blobs = blobs or []
        header = dict(header, blobs=[len(b) for b in blobs])
        data = json.dumps(header).encode()
        self._write(_LEN.pack(len(data)) + data)
        for b in blobs:
            self._write(b)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.write_fd, view)
            view = view[n:]

    def recv(self, timeout: Optional[float]) -> Tuple[Dict[str, Any], List[bytes]]:
        deadline = None if timeout is None else time.monotonic() + timeout
        (n,) = _LEN.unpack(self._read(_LEN.size, deadline))
        if n > MAX_HEADER:
            raise ChannelClosed("malformed message")
        header = json.loads(self._read(n, deadline))
        blobs = [self._read(size, deadline) for size in header.get("blobs", [])]
        return header, blobs

    def _read(self, n: int, deadline: Optional[float]) -> bytes:
        chunks = []
        while n > 0:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChannelTimeout()
                ready, _, _ = select.select([self.read_fd], [], [], left)
                if not ready:
                    raise ChannelTimeout()
            chunk = os.read(self.read_fd, min(n, 1 << 20))
            if not chunk:
                raise ChannelClosed("end of channel")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass
