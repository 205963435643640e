"""The private channel between the judge and a worker: a pipe pair the worker's code inherits by number.

A message is a 4-byte length, a JSON header, then the binary blobs the header lists (npy-encoded arrays).
The worker's stdout/stderr go to a log file, so nothing the candidate prints can reach this channel.
"""
from __future__ import annotations

import json
import mmap
import os
import select
import struct
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

_LEN = struct.Struct(">Q")
MAX_HEADER = 64 << 20
# The timing command's default limits on one sample's buffer sets: how many, and their bytes in all.
MAX_BATCH, BATCH_BYTES = 64, 64 << 20
LARGE_BLOB = 1 << 20  # blobs from this size are received on fresh pages (Channel._read)


def widen(fd: int) -> None:
    """Linux: a 1 MiB pipe buffer (from 64 KiB), so a 32 MiB array crosses in 32 wake-ups rather than 512.
    Silently kept as is where the system's pipe-max-size is lower or the fd is not a pipe."""
    if not sys.platform.startswith("linux"):
        return  # the command number means something else elsewhere
    import fcntl
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)  # 1031: Linux's, before Python 3.10
    except OSError:
        pass


class ChannelClosed(Exception):
    """The other end is gone (the worker exited or crashed)."""


class ChannelTimeout(Exception):
    pass


class Channel:
    def __init__(self, read_fd: int, write_fd: int, write_timeout: Optional[float] = None) -> None:
        """write_timeout: seconds a send may wait for the other end to make room before ChannelTimeout (a shared
        reference's answers to one judge that stopped reading must not hold up the others); None waits."""
        self.read_fd = read_fd
        self.write_fd = write_fd
        self.write_timeout = write_timeout
        for fd in (read_fd, write_fd):
            widen(fd)
        if write_timeout is not None:
            os.set_blocking(write_fd, False)

    def send(self, header: Dict[str, Any], blobs: Optional[List[Any]] = None) -> None:
        """blobs: bytes-like objects, or tuples of them sent back to back as one blob (an array's header and
        its data, without joining them into one copy first)."""
        parts = [b if isinstance(b, tuple) else (b,) for b in (blobs or [])]
        header = dict(header, blobs=[sum(memoryview(p).nbytes for p in blob) for blob in parts])
        data = json.dumps(header).encode()
        self._write(_LEN.pack(len(data)) + data)
        for blob in parts:
            for p in blob:
                self._write(p)

    def _write(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        while view:
            if self.write_timeout is not None:
                _, writable, _ = select.select([], [self.write_fd], [], self.write_timeout)
                if not writable:
                    raise ChannelTimeout()
                try:
                    n = os.write(self.write_fd, view)
                except BlockingIOError:
                    continue
            else:
                n = os.write(self.write_fd, view)
            view = view[n:]

    def recv(self, timeout: Optional[float]) -> Tuple[Dict[str, Any], List[bytes]]:
        deadline = None if timeout is None else time.monotonic() + timeout
        (n,) = _LEN.unpack(self._read(_LEN.size, deadline))
        if n > MAX_HEADER:
            raise ChannelClosed("malformed message")
        header = json.loads(self._read(n, deadline))
        blobs = [self._read(size, deadline, blob=True) for size in header.get("blobs", [])]
        return header, blobs

    def _read(self, n: int, deadline: Optional[float], blob: bool = False) -> Any:
        """Exactly n bytes, read straight into one buffer (blobs are arrays of many MiB): a bytearray, or for a
        blob of LARGE_BLOB bytes or more fresh private pages, which the reads fill without the pass that zeroes
        a bytearray first (a judge reads about 1 GB per softmax evaluation on a GPU)."""
        buf: Any = None
        if blob and n >= LARGE_BLOB and hasattr(mmap, "MAP_PRIVATE"):
            try:
                buf = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE)
            except OSError:
                pass  # as a bytearray of that size would (MemoryError)
        if buf is None:
            buf = bytearray(n)
        view = memoryview(buf)
        got = 0
        while got < n:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChannelTimeout()
                ready, _, _ = select.select([self.read_fd], [], [], left)
                if not ready:
                    raise ChannelTimeout()
            k = os.readv(self.read_fd, [view[got:]])
            if not k:
                raise ChannelClosed("end of channel")
            got += k
        return buf

    def close(self) -> None:
        for fd in (self.read_fd, self.write_fd):
            try:
                os.close(fd)
            except OSError:
                pass


class DrainedChannel:
    """A channel whose messages a thread reads as soon as they arrive, for recv() to hand out in order. Its other
    end never blocks writing to it: the judge reads the reference's answers this way, so a reference serving
    several judges is never held up by one that is busy with its candidate."""

    def __init__(self, chan: Channel) -> None:
        import queue
        import threading
        self.chan = chan
        self.read_fd, self.write_fd = chan.read_fd, chan.write_fd
        self.queue: "queue.Queue[Any]" = queue.Queue()
        self.thread = threading.Thread(target=self._drain, name="reference-reader", daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while True:
            try:
                item: Any = self.chan.recv(None)
            except (ChannelClosed, OSError, ValueError) as e:
                self.queue.put(e if isinstance(e, ChannelClosed) else ChannelClosed(str(e)))
                return
            self.queue.put(item)

    def send(self, header: Dict[str, Any], blobs: Optional[List[Any]] = None) -> None:
        self.chan.send(header, blobs)

    def recv(self, timeout: Optional[float]) -> Tuple[Dict[str, Any], List[bytes]]:
        import queue
        try:
            item = self.queue.get(timeout=timeout)
        except queue.Empty:
            raise ChannelTimeout()
        if isinstance(item, ChannelClosed):
            self.queue.put(item)  # every later recv sees the end too
            raise item
        return item

    def close(self) -> None:
        # Our writing end first: the other side sees the end and closes its own, which ends the reading thread
        # (a descriptor closed under a blocked read would leave the thread waiting).
        try:
            os.close(self.write_fd)
        except OSError:
            pass
        self.thread.join(timeout=0.2)  # a shared reference busy with another judge notices later; not waited for
        try:
            os.close(self.read_fd)
        except OSError:
            pass
