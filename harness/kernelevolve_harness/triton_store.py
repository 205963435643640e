"""Triton's cache manager in a candidate's worker (TRITON_CACHE_MANAGER, set by backends/triton.py): Triton's own
file cache in the worker's folder; an entry that folder lacks is taken from the host's store of what earlier
candidates compiled (triton.publish), copied into the folder, instead of compiled again. Imported by Triton,
inside the worker only."""
from __future__ import annotations

import os
from typing import Dict, Optional

from triton.runtime.cache import FileCacheManager

from .backends.triton import STORE_ENV, copy_entry

TAKEN = [0]  # entries this worker took from the store (its verdict's compile.from_store)


class StoreCacheManager(FileCacheManager):
    def __init__(self, key: str, override: bool = False, dump: bool = False) -> None:
        super().__init__(key, override=override, dump=dump)
        self.store = None if (override or dump) else os.environ.get(STORE_ENV)

    def get_file(self, filename: str) -> Optional[str]:
        found = super().get_file(filename)
        if found is None and self._take(filename):
            found = super().get_file(filename)
        return found

    def get_group(self, filename: str) -> Optional[Dict[str, str]]:
        group = super().get_group(filename)
        if group is None and self._take(f"__grp__{filename}"):
            group = super().get_group(filename)
        return group

    def _take(self, name: str) -> bool:
        """Copies the store's entry of this key into the worker's folder, when it has `name`."""
        if not self.store:
            return False
        entry = os.path.join(self.store, self.key)
        if not os.path.exists(os.path.join(entry, name)):
            return False
        try:
            copy_entry(entry, self.cache_dir)
        except OSError:
            return False  # pruned meanwhile: compiled here instead
        TAKEN[0] += 1
        return True
