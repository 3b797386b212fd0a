"""What a recording of work (`mdarray.iterate` on CUDA graphs) needs every layer to
respect: whether one is on, and the refusal of what it cannot hold.

Chunks note the `Recording.epoch` they are made in: while one records, memory of an array
made before it began must not change (a copy on write's move, a write committed into new
memory), since the recording would keep reading and writing the old memory at each
launch while the array held the new. Such a move, and anything else a recording can
never hold (a matrix product only cuBLAS should run), raises `RecordingRefused`: the
loop then runs as written, without trying to record again.
"""

from __future__ import annotations

from threading import get_ident
from typing import Any


class RecordingRefused(RuntimeError):
    """Work that a recording can never hold (the loop runs as written)."""


class Recording:
    """Which thread is recording work now (`thread`, None: none), and `epoch`, the count
    of recordings. Other threads go on as they would (their moves and copies are not the
    recording's); see `here`."""

    thread: int | None = None
    epoch = 0

    @classmethod
    def here(cls) -> bool:
        """Whether this thread is recording."""
        return cls.thread == get_ident()

    @classmethod
    def check(cls, members: list[Any]) -> None:
        """Refuse a move of memory that `members` (Chunks) use, if one was made before."""
        if any(m._born < cls.epoch for m in members):
            raise RecordingRefused(
                "the loop body writes into an array made before it ran, in a way that "
                "moves the array to new memory (a copy on write): it cannot be recorded"
            )
