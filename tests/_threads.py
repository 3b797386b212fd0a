"""Running a test's work in several threads at once, switching between them as often as
the interpreter allows, so that races in shared bookkeeping show."""

import sys
import threading
from collections.abc import Callable


def in_threads(work: Callable[[], object], count: int = 8) -> None:
    """Run `work` in `count` threads at once (a switch interval of 1 us) and wait for all."""
    threads = [threading.Thread(target=work) for _ in range(count)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
