"""The harness's version: a hash of its own files, so hosts keep one uploaded copy per version and warm-worker
servers of different versions never serve each other's judges."""
from __future__ import annotations

import hashlib
import os

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def content_version() -> str:
    """A hash of the package's files: hosts keep one uploaded copy per version."""
    h = hashlib.sha256()
    for root, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                h.update(os.path.relpath(path, PACKAGE_DIR).encode())
                with open(path, "rb") as f:
                    h.update(f.read())
    return h.hexdigest()[:16]
