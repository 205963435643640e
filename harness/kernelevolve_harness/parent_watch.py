"""Ends the judge when the process that started it is gone (an editor or CLI killed mid-run): nobody is left to
read its verdict, and its workers would hold memory and devices until the job's own timeouts. The main thread is
sent SIGHUP (which wakes it from any wait), whose handler raises SystemExit so that the judge's cleanup kills its
workers; a judge that does not stop is ended after a grace period."""
from __future__ import annotations

import os
import signal
import threading
import time


def _parent_gone(_signum: int, _frame: object) -> None:
    raise SystemExit("kernelevolve_harness: the process that started this evaluation is gone; stopping.")


def exit_with_parent(poll_s: float = 0.5, grace_s: float = 5.0) -> None:
    """Call from the main thread."""
    parent = os.getppid()
    if parent <= 1:  # already orphaned (started by init or a subreaper): nothing to watch
        return
    signal.signal(signal.SIGHUP, _parent_gone)
    main = threading.main_thread().ident

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(poll_s)
        if main is not None:
            signal.pthread_kill(main, signal.SIGHUP)
        time.sleep(grace_s)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
