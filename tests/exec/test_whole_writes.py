"""Every in-place writer is whole or nothing (`_chunkwise.commit`): mask assignment,
in-place sort (of views too), ``fill``, ``put``, ``copyto``, ``putmask``, ``place``,
``put_along_axis``, ``ufunc.at``, ``fill_diagonal`` and integer-array assignment.

Each writer runs on layouts with replicas (several devices holding a chunk) and several
chunks per device; a MemoryError or an interrupt is injected into its k-th call of a
backend's copy or write, for every k the write makes. The array then holds its old value
or, once the commit began, its new value, whole: every chunk agrees with one of NumPy's
two values. A failure of the operation itself (an object element's ZeroDivisionError, a
comparison that raises, a value that does not cast) changes nothing.
"""

import linecache
import sys
import threading
import warnings

import numpy as np
import pytest
from _backend_facts import numpy_dtypes_only

import mdarray
from mdarray._storage import chunks as _chunks
from mdarray.testing import _host

D = mdarray.devices()


def _on(shape, *chunks):
    """A layout of `shape` with these chunks (index tuples), the i-th on device
    ``D[i % len(D)]`` (several chunks per device where there are fewer devices)."""
    index_map: dict = {}
    for i, chunk in enumerate(chunks):
        index_map.setdefault(D[i % len(D)], []).append(chunk)
    return mdarray.Layout(shape, index_map)


def _layouts(shape):
    n = shape[0]
    rest = tuple(slice(0, m) for m in shape[1:])
    return {
        "replicas": _on(shape, *[(slice(0, n), *rest)] * 3),
        "blocks": _on(shape, *[(slice(i, min(i + 2, n)), *rest) for i in range(0, n, 2)]),
        "overlapping": _on(shape, (slice(0, 5), *rest), (slice(2, n), *rest), (slice(4, n), *rest)),
    }


LAYOUTS_1D = _layouts((8,))
LAYOUTS_2D = _layouts((8, 8))

MASK = np.array([True, False, True, True, False, False, True, True])

# name: (shape, our write, NumPy's write on the same data); a write takes the array.
WRITERS = {
    "x[mask] = scalar": ((8,), lambda x: x.__setitem__(MASK, -1.0)),
    "x[mask] = array": ((8,), lambda x: x.__setitem__(MASK, -np.arange(5.0))),
    "x[mask] = DistArray": (
        (8,),
        lambda x: (
            x.__setitem__(MASK, mdarray.asarray(-np.arange(5.0)))
            if isinstance(x, mdarray.DistArray)
            else x.__setitem__(MASK, -np.arange(5.0))
        ),
    ),
    "x[idx] = array": ((8,), lambda x: x.__setitem__([6, 1, 6, 3], -np.arange(4.0))),
    "x.sort()": ((8,), lambda x: x.sort()),
    "x[2:7].sort()": ((8,), lambda x: x[2:7].sort()),
    "x.fill": ((8,), lambda x: x.fill(-2.0)),
    "x.put": ((8,), lambda x: x.put([0, 5, 7], [-1.0, -2.0, -3.0])),
    "np.put": ((8,), lambda x: np.put(x, [7, 2], [-5.0, -6.0])),
    "np.copyto": ((8,), lambda x: np.copyto(x, -np.arange(8.0))),
    "np.putmask": ((8,), lambda x: np.putmask(x, MASK, -7.0)),
    "np.place": ((8,), lambda x: np.place(x, MASK, [-1.0, -2.0])),
    "np.put_along_axis": (
        (8,),
        lambda x: np.put_along_axis(x, np.array([1, 4]), -9.0, axis=0),
    ),
    "np.add.at": ((8,), lambda x: np.add.at(x, [0, 0, 5], 2.0)),
    "np.fill_diagonal": ((8, 8), lambda x: np.fill_diagonal(x, -4.0)),
    "x += y": (
        (8,),
        lambda x: x.__iadd__(
            mdarray.distributed_array(_OTHER, LAYOUTS_1D["blocks"])
            if isinstance(x, mdarray.DistArray)
            else _OTHER
        ),
    ),
    "x *= 3": ((8,), lambda x: x.__imul__(3)),
    "x *= 3, warnings shown": ((8,), lambda x: _shown(x.__imul__, 3)),
    "x += x[::-1], warnings shown": ((8,), lambda x: _shown(x.__iadd__, x[::-1])),
    "np.multiply(x[1:], 2.0, out=x[1:])": (
        (8,),
        lambda x: np.multiply(x[1:], 2.0, out=x[1:]),
    ),
}
_OTHER = np.arange(8.0) - 3


def _shown(method, operand):
    """``method(operand)`` with NumPy's warnings shown, not raised (the suite raises
    them): plain numbers' kernels then write in place on every device."""
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        return method(operand)


_OLD = {(8,): np.array([5.0, 3.0, 9.0, 1.0, 7.0, 2.0, 8.0, 0.0])}
_OLD[(8, 8)] = np.arange(64.0).reshape(8, 8)[::-1] % 11


def _agrees(x, host) -> bool:
    """Whether every chunk of x holds `host`'s elements."""
    return all(
        np.array_equal(_host(buffer), host[box_slices(box)])
        for box, buffer in zip(x.layout.boxes, x.storage.buffers)
    )


def box_slices(box):
    return tuple(slice(r.start, r.stop, r.step) for r in box)


# The backend's methods that copy or write pieces: each may fail on memory or be where
# an interrupt lands.
_METHODS = ("assign", "move", "from_host", "adopt", "copy", "empty")


def _inject(monkeypatch, backend, calls):
    for name in _METHODS:
        original = getattr(backend, name)

        def failing(*args, _original=original, **kwargs):
            calls["n"] += 1
            if calls["n"] == calls["at"]:
                raise calls["error"]("injected")
            return _original(*args, **kwargs)

        monkeypatch.setattr(backend, name, failing)


@pytest.fixture(autouse=True)
def _gathering_allowed():
    """Some writers gather (the fallback policy); what they write back is the subject."""
    with mdarray.options(fallback="allow"):
        yield


@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt])
@pytest.mark.parametrize("layout", ["replicas", "blocks", "overlapping"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_failure_at_any_copy_leaves_old_or_new_whole(monkeypatch, writer, layout, error):
    shape, write = WRITERS[writer]
    old = _OLD[shape]
    new = old.copy()
    write(new)
    layouts = LAYOUTS_2D if len(shape) == 2 else LAYOUTS_1D
    backend = mdarray.asarray(old).storage.backend
    calls = {"n": 0, "at": 0, "error": error}
    _inject(monkeypatch, backend, calls)
    x = mdarray.distributed_array(old, layouts[layout])
    calls["n"] = 0
    write(x)
    copies = calls["n"]
    np.testing.assert_array_equal(x.get(), new)
    assert _agrees(x, new)
    outcomes = set()
    for at in range(1, copies + 1):
        calls.update(at=0)
        x = mdarray.distributed_array(old, layouts[layout])
        calls.update(n=0, at=at)
        with pytest.raises(error):
            write(x)
        calls["at"] = 0
        whole = [v for v in (old, new) if _agrees(x, v)]
        assert whole, f"{writer}: a failure at copy {at} of {copies} left chunks disagreeing"
        np.testing.assert_array_equal(x.get(), whole[0])
        outcomes.add(whole[0] is new)
    monkeypatch.undo()


class _Interrupt:
    """A KeyboardInterrupt raised at the `at`-th line that mdarray's code runs (as an
    interrupt lands between any two lines), counting lines with ``sys.settrace``.

    Not where a ``with`` block ends: CPython runs the call of ``__exit__`` as a line of
    the ``with`` statement, outside the block's handler, so an exception raised by the
    tracer there skips ``__exit__`` (a lock stays held, and every other thread then
    waits on it forever); a real interrupt cannot land there (CPython checks for signals
    on entering Python functions and on backward jumps, and the locks' ``__exit__`` is
    C)."""

    def __init__(self, at: int = 0):
        self.at, self.lines = at, 0
        self.last: dict[int, int] = {}  # per running frame, its line before this one

    def __call__(self, frame, event, arg):
        if "/mdarray/" not in frame.f_code.co_filename:
            return self
        if event == "return":
            self.last.pop(id(frame), None)
        if event == "line":
            before = self.last.get(id(frame), 0)
            self.last[id(frame)] = frame.f_lineno
            if before > frame.f_lineno and _opens_with(frame):
                return self  # back at a with statement from its block: its exit
            self.lines += 1
            if self.lines == self.at:
                raise KeyboardInterrupt("injected")
        return self

    def run(self, fn):
        sys.settrace(self)
        try:
            fn()
        finally:
            sys.settrace(None)


def _free(lock) -> bool:
    """Whether another thread can take `lock` (a lock held by this thread is not)."""
    taken: list = []

    def take():
        if lock.acquire(timeout=5):
            lock.release()
            taken.append(True)

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return bool(taken)


def _opens_with(frame) -> bool:
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).lstrip()
    return line.startswith(("with ", "async with "))


@pytest.mark.parametrize("layout", ["replicas", "blocks", "overlapping"])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_an_interrupt_at_any_line_leaves_old_or_new_whole(writer, layout):
    """Interrupted at each of the last 40 lines the write runs (where its copies into
    the array are) and at every 200th line before, the array is old or new, whole."""
    shape, write = WRITERS[writer]
    old = _OLD[shape]
    new = old.copy()
    write(new)
    layouts = LAYOUTS_2D if len(shape) == 2 else LAYOUTS_1D
    write(mdarray.distributed_array(old, layouts[layout]))  # plans made: lines repeat
    x = mdarray.distributed_array(old, layouts[layout])
    counting = _Interrupt()
    counting.run(lambda: write(x))
    assert _agrees(x, new)
    lines = counting.lines
    for at in sorted({*range(max(1, lines - 40), lines + 1), *range(1, lines, 200)}):
        x = mdarray.distributed_array(old, layouts[layout])
        with pytest.raises(KeyboardInterrupt):
            _Interrupt(at).run(lambda x=x: write(x))
        whole = [v for v in (old, new) if _agrees(x, v)]
        assert whole, f"{writer}: an interrupt at line {at} of {lines} left chunks disagreeing"
        np.testing.assert_array_equal(x.get(), whole[0])
        assert _free(_chunks._LOCK), f"{writer}: an interrupt at line {at} left a lock held"


# Operations that fail on their own (NumPy raises too): (shape, dtype, write, error).
FAILING = {
    "object floor_divide.at by zero": (
        object,
        lambda x: np.floor_divide.at(x, [0, 3, 5], np.array([1, 2, 0], dtype=object)),
        ZeroDivisionError,
    ),
    "sort of incomparable objects": (object, lambda x: x.sort(), TypeError),
    "x[mask] = a string": (float, lambda x: x.__setitem__(MASK, "abc"), ValueError),
    "x[mask] = too many values": (
        float,
        lambda x: x.__setitem__(MASK, np.arange(6.0)),
        (ValueError, IndexError),
    ),
    "put out of range": (float, lambda x: x.put([0, 9], [1.0, 2.0]), IndexError),
    "copyto unsafe cast refused": (
        np.int64,
        lambda x: np.copyto(x, np.arange(8.0) + 0.5, casting="same_kind"),
        TypeError,
    ),
}


@numpy_dtypes_only
@pytest.mark.parametrize("layout", ["replicas", "blocks", "overlapping"])
@pytest.mark.parametrize("case", sorted(FAILING))
def test_an_operation_that_fails_changes_nothing(case, layout):
    dtype, write, error = FAILING[case]
    old = _OLD[(8,)].astype(dtype)
    if case == "sort of incomparable objects":
        old[5] = "five"
    with pytest.raises(error):
        write(old.copy())  # NumPy raises too
    x = mdarray.distributed_array(old, LAYOUTS_1D[layout])
    with pytest.raises(error):
        write(x)
    assert _agrees(x, old)
    np.testing.assert_array_equal(x.get(), old)
