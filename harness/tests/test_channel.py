"""The judge-worker channel carries arrays as .npy blobs: what is sent as (header, data) parts arrives as the same
array, read into one buffer and viewed without a copy."""
import io
import os
import threading
import time

import numpy as np
import pytest

from kernelevolve_harness.arrays import from_npy, npy_parts
from kernelevolve_harness.protocol import Channel, ChannelClosed, ChannelTimeout


def to_npy(a) -> bytes:
    """The plain .npy encoding, one bytes object (np.save)."""
    f = io.BytesIO()
    np.save(f, a, allow_pickle=False)
    return f.getvalue()


def _pair():
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    return Channel(r1, w2), Channel(r2, w1)  # a's writes reach b and the other way round


ARRAYS = [
    np.arange(12, dtype=np.float32).reshape(3, 4),
    np.asfortranarray(np.arange(12, dtype=np.float64).reshape(3, 4)),
    np.arange(20, dtype=np.int32)[::2],  # not contiguous
    np.array([True, False, True]),
    np.zeros((0, 5), dtype=np.float16),
    np.array(3.5),  # zero-dimensional
    np.random.default_rng(1).standard_normal(3 << 20).astype(np.float32),  # 12 MiB: many pipe buffers
]


def test_arrays_cross_the_channel_unchanged():
    a, b = _pair()
    sender = threading.Thread(target=lambda: a.send({"type": "call", "n": 1}, [npy_parts(x) for x in ARRAYS]
                                                    + [to_npy(ARRAYS[0])]))
    sender.start()
    header, blobs = b.recv(timeout=30)
    sender.join()
    assert header["type"] == "call" and header["n"] == 1 and len(blobs) == len(ARRAYS) + 1
    for sent, blob in zip(ARRAYS + [ARRAYS[0]], blobs):
        got = from_npy(blob)
        assert got.dtype == sent.dtype and got.shape == sent.shape
        assert np.array_equal(got, sent)
    assert from_npy(bytes(blobs[0])).tolist() == ARRAYS[0].tolist()  # plain bytes are read the same way


def test_large_blobs_arrive_on_fresh_pages_and_are_viewed_in_place():
    from kernelevolve_harness.protocol import LARGE_BLOB
    big = np.random.default_rng(4).standard_normal(3 * LARGE_BLOB // 8 + 5)  # float64, past the limit
    small = np.arange(7, dtype=np.int32)
    a, b = _pair()
    sender = threading.Thread(target=lambda: a.send({"type": "call"}, [npy_parts(big), npy_parts(small)]))
    sender.start()
    _, blobs = b.recv(timeout=30)
    sender.join()
    got_big, got_small = from_npy(blobs[0]), from_npy(blobs[1])
    assert np.array_equal(got_big, big) and np.array_equal(got_small, small)
    assert np.shares_memory(got_big, np.frombuffer(blobs[0], dtype=np.uint8))  # a view, not a copy
    assert len(blobs[0]) > LARGE_BLOB > len(blobs[1])


def test_object_arrays_and_truncated_blobs_are_refused():
    header, data = npy_parts(np.zeros(4, dtype=np.float32))
    with pytest.raises(ValueError):
        from_npy(bytearray(header + bytes(data)[:8]))
    pickled = to_npy(np.zeros(2)).replace(b"<f8", b"|O8", 1)
    with pytest.raises(ValueError):
        from_npy(bytearray(pickled))


def test_a_closed_or_silent_peer_is_reported():
    a, b = _pair()
    with pytest.raises(ChannelTimeout):
        b.recv(timeout=0.2)
    a.close()
    with pytest.raises(ChannelClosed):
        b.recv(timeout=5)


def test_a_send_to_an_end_that_stops_reading_times_out_when_asked_to():
    # A shared reference's answers to one judge that stopped reading must not hold up the others.
    r, w = os.pipe()
    chan = Channel(os.open(os.devnull, os.O_RDONLY), w, write_timeout=0.2)
    t = time.monotonic()
    with pytest.raises(ChannelTimeout):
        chan.send({"type": "ref"}, [np.zeros(4 << 20, np.uint8).data])  # far more than the pipe holds
    assert time.monotonic() - t < 5
    os.close(r)
    chan.close()
