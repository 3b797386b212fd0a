"""Writes are whole or nothing (`_chunkwise.writes_in_place`, `_chunkwise.commit`).

Whatever raises in the middle of a write (an element's own operation in an object array,
a MemoryError, an interrupt, in the second or third kernel call), the array keeps its old
value in every replica; an interrupt during the commit lets the commit finish, so the
array holds the new value whole. NumPy's verdict (does the operation raise?) is checked on
the same data.
"""

import warnings

import numpy as np
import pytest
from _backend_facts import numpy_dtypes_only

import mdarray
from mdarray._core import decided as _decided, plan_cache as _plan_cache
from mdarray.testing import _host

D = mdarray.devices()


def _on(*chunks):
    """A layout of 8 elements with these chunks, the i-th on device ``D[i % len(D)]``
    (several chunks per device where there are fewer devices)."""
    index_map: dict = {}
    for i, chunk in enumerate(chunks):
        index_map.setdefault(D[i % len(D)], []).append(chunk)
    return mdarray.Layout((8,), index_map)


LAYOUTS = {
    "replicas": _on(slice(0, 8), slice(0, 8), slice(0, 8)),
    "blocks": _on(slice(0, 3), slice(3, 6), slice(6, 8)),
    "overlapping": _on(slice(0, 5), slice(2, 8), slice(4, 8)),
}


def _check_unchanged(x, host):
    """Every chunk holds `host`'s elements, so every way of reading x agrees."""
    for box, buffer in zip(x.layout.boxes, x.storage.buffers):
        np.testing.assert_array_equal(_host(buffer), host[box[0].start : box[0].stop])
    np.testing.assert_array_equal(x.get(), host)
    np.testing.assert_array_equal(x.reshard(mdarray.Layout.replicated((8,), D[-1:])).get(), host)


@numpy_dtypes_only
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_object_floor_division_by_zero_changes_nothing(layout):
    host = np.array([4, 6, 8, 10, 12, 14, 16, 18], dtype=object)
    divisor = np.array([2, 1, 2, 1, 2, 1, 0, 2], dtype=object)
    with pytest.raises(ZeroDivisionError):
        host.copy().__ifloordiv__(divisor)  # NumPy raises too (after writing part)
    x = mdarray.distributed_array(host, LAYOUTS[layout])
    b = mdarray.distributed_array(divisor, LAYOUTS["blocks"])
    with pytest.raises(ZeroDivisionError):
        x //= b
    _check_unchanged(x, host)
    x //= mdarray.distributed_array(divisor + (divisor == 0), LAYOUTS["blocks"])
    np.testing.assert_array_equal(x.get(), host // (divisor + (divisor == 0)))


class _Failing:
    """An object element whose addition raises `error` (others add as numbers)."""

    def __init__(self, value, error=None):
        self.value, self.error = value, error

    def __add__(self, other):
        if self.error is not None:
            raise self.error
        return _Failing(self.value + other)

    def __eq__(self, other):
        return isinstance(other, _Failing) and other.value == self.value

    __hash__ = None


@numpy_dtypes_only
@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt])
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_object_element_raising_in_a_later_chunk_changes_nothing(layout, error):
    host = np.array([_Failing(i) for i in range(8)], dtype=object)
    host[7] = _Failing(7, error("from an element"))
    x = mdarray.distributed_array(host, LAYOUTS[layout])
    with pytest.raises(error):
        x += 1
    _check_unchanged(x, host)


# Writes of numbers whose kernel fails on its 2nd or 3rd call, as memory or an interrupt
# may make any kernel fail: (the write, NumPy's write on the same data).
WRITES = {
    "x += y": (lambda x, y: x.__iadd__(y), lambda a, b: a.__iadd__(b)),
    "add unsafe": (
        lambda x, y: np.add(x, 1.5, out=x, casting="unsafe"),
        lambda a, b: np.add(a, 1.5, out=a, casting="unsafe"),
    ),
    "multiply out= view": (
        lambda x, y: np.multiply(x[1:], y[1:], out=x[1:]),
        lambda a, b: np.multiply(a[1:], b[1:], out=a[1:]),
    ),
}


@pytest.fixture(params=["warnings raise", "warnings shown"])
def warnings_rule(request):
    """The suite turns warnings into errors, under which NumPy's kernels may raise after
    writing (a staged write); shown, plain numbers' kernels write in place on every
    device (`Backend.write_each`)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error" if request.param == "warnings raise" else "default")
        yield request.param


@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt])
@pytest.mark.parametrize("call", [2, 3])
@pytest.mark.parametrize("write", sorted(WRITES))
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_kernel_failing_midway_leaves_old_or_new_whole(
    monkeypatch, layout, write, call, error, warnings_rule
):
    """Staged, the write changes nothing; in place on every device, the calls after the
    failed one run (and, after a failed allocation, it again) before the error
    propagates: the new value, whole. An interrupt is injected where it reaches Python
    during a NumPy kernel, after the kernel wrote; a MemoryError before it writes."""
    host = np.arange(8, dtype=np.int64) * 3
    other = np.arange(8, dtype=np.int64) + 1
    ours, numpys = WRITES[write]
    x = mdarray.distributed_array(host, LAYOUTS[layout])
    y = mdarray.distributed_array(other, LAYOUTS["blocks"])
    backend = x.storage.backend
    calls = {"n": 0, "in place": False}
    kernel_of = backend.ufunc_kernel

    def failing(ufunc):
        kernel = kernel_of(ufunc)

        def run(*args, **kwargs):
            calls["n"] += 1
            calls["in place"] = len(args) > ufunc.nin or "out" in kwargs
            if calls["n"] == call:
                if error is KeyboardInterrupt:  # it reaches Python after the kernel ran
                    kernel(*args, **kwargs)
                raise error("injected")
            return kernel(*args, **kwargs)

        return None if kernel is None else run

    _plan_cache.clear()  # plans and decided calls keep the kernel they were made with
    _decided.clear()
    monkeypatch.setattr(backend, "ufunc_kernel", failing)
    want = host.copy()
    numpys(want, other)
    try:
        ours(x, y)
    except error:
        # Staged (the kernels computed new memory), or the first in-place call failed
        # before writing: nothing written.
        if not calls["in place"] or (calls["n"] == call and error is MemoryError):
            _check_unchanged(x, host)
        else:
            _check_unchanged(x, want)
    else:  # one kernel call did it all: the whole write, as NumPy's
        assert calls["n"] < call
        _check_unchanged(x, want)
    monkeypatch.undo()
    _plan_cache.clear()
    _decided.clear()


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_an_interrupt_at_any_copy_of_a_setitem_leaves_old_or_new_whole(monkeypatch, layout):
    """Interrupted at each of its copies in turn (moving the value's pieces, then the
    commit), ``x[...] = v`` leaves x all old or, once the commit began, all new."""
    host = np.arange(8.0)
    value = mdarray.distributed_array(-host, LAYOUTS["blocks"])
    backend = value.storage.backend
    assign = backend.assign
    calls = {"n": 0, "at": 0}

    def interrupted(*args):
        calls["n"] += 1
        if calls["n"] == calls["at"]:
            raise KeyboardInterrupt
        assign(*args)

    monkeypatch.setattr(backend, "assign", interrupted)
    mdarray.distributed_array(host, LAYOUTS[layout])[...] = value
    copies = calls["n"]
    assert copies >= 1
    outcomes = set()
    for at in range(1, copies + 1):
        x = mdarray.distributed_array(host, LAYOUTS[layout])
        calls.update(n=0, at=at)
        with pytest.raises(KeyboardInterrupt):
            x[...] = value
        calls["at"] = 0
        new = x.get()[1] < 0
        _check_unchanged(x, -host if new else host)
        outcomes.add(new)
    assert True in outcomes  # some interrupts came during the commit


def test_plain_numbers_write_in_place_on_every_device():
    """``x += y`` of floats, with NumPy's warnings shown: each device's kernel writes x's
    slab itself (nothing staged: the memory stays), and every replica holds the sum."""
    layout = _on(slice(0, 8), slice(0, 8), slice(0, 4), slice(4, 8))
    host = np.arange(8.0)
    x = mdarray.distributed_array(host, layout)
    y = mdarray.distributed_array(host * 10, layout)
    backend = x.storage.backend
    slabs = [backend.pointer(s) for s in x.storage.slabs]
    # CuPy's launches run Python between devices: staged there (`Backend.writes_each`).
    in_place = backend.writes_each(np.add) or len(slabs) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        for _ in range(3):  # a staged write's results are new memory each time
            x += y
            assert ([backend.pointer(s) for s in x.storage.slabs] == slabs) is in_place
    _check_unchanged(x, host * 31)
