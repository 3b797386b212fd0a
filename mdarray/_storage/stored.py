"""`Stored`: an array as the layers under DistArray see it, its storage and its mode."""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from mdarray._backends.backend import DeviceSet
from mdarray._core.decided import DECIDERS, RUNNERS, never, remember
from mdarray._core.mode_rules import host_facts
from mdarray._core.modes import REPLICA, Mode
from mdarray._layouts.layout import Layout
from mdarray._spmd import processes as _processes

from .chunks import Chunks

_S = TypeVar("_S", bound="Stored")


def reader(path: str, doc: str) -> property:
    """A read-only attribute read by C code (`operator.attrgetter` of `path`): as Python
    properties, the hot paths' reads were a fifth of a small operation's Python calls."""
    return property(attrgetter(path), doc=doc)


class Stored:
    """An array as the layers under DistArray see it: `storage` (a Chunks) and `mode`.

    DistArray is the one subclass; it adds the NumPy and array API protocols. The
    attributes here are what the movement and execution layers and the op modules read.
    """

    __slots__ = ("_call_key", "_mode", "_storage")
    # Set once by DistArray._new.
    _storage: Chunks
    _mode: Mode
    _call_key: tuple  # its part of a decided call's key (`decided_key`)
    # DistArray's: its one constructor and its device group (None until first asked).
    _new: Callable[[Chunks, Mode], Any]
    _group: DeviceSet | None

    # Copies and pickles: of the value (storage and mode), never attribute by attribute.

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        # The storage pickles as its value, each allocation once (`Chunks.__reduce__`).
        group = self._storage.layout.devices if self._group is None else tuple(self._group)
        return (_unpickled, (type(self), self._storage, self._mode, group))

    def __copy__(self: _S) -> _S:
        """``copy.copy(x)``: an independent copy (as `__deepcopy__`), as NumPy's."""
        # A copy, as NumPy's and CuPy's: writes through either never reach the other.
        return self.__deepcopy__(None)

    def __deepcopy__(self: _S, memo: dict[int, Any] | None) -> _S:
        """``copy.deepcopy(x)``: the same values, layout, mode and device group, sharing
        no memory with `x`."""
        out = self._new(self._storage.copied(memo), self._mode)
        out._group = self._group
        return out

    if TYPE_CHECKING:  # the readers below, typed

        @property
        def storage(self) -> Chunks: ...
        @property
        def mode(self) -> Mode: ...
        @property
        def layout(self) -> Layout: ...
        @property
        def dtype(self) -> np.dtype: ...
        @property
        def shape(self) -> tuple[int, ...]: ...

    else:
        storage = reader(
            "_storage",
            "Internal: the storage layer's value (`mdarray._storage.chunks.Chunks`) that op "
            "code works on; no part of the public API (read ``all_chunks()``, ``layout``, "
            "``mode``).",
        )
        mode = reader(
            "_mode", "How overlapping copies combine, REPLICA or a partial SUM/PROD/MAX/MIN."
        )
        layout = reader("_storage.layout", "Which device holds which part (an immutable `Layout`).")
        dtype = reader("_storage.dtype", "The data type of the elements.")
        shape = reader("_storage.layout.shape", "The array's dimensions.")

    def signature(self) -> tuple:
        """Internal: ``(layout, mode, dtype, backend)``, all that a plan made for this
        array as an operand may depend on (`mdarray._ops.engine.ufunc_plans`); never its
        values."""
        storage = self._storage
        return (storage.layout, self._mode, storage.dtype, storage.backend)

    @property
    def ndim(self) -> int:
        """The number of axes, ``len(shape)``."""
        return len(self._storage.layout.shape)

    @property
    def size(self) -> int:
        """The number of elements (the value's, not the sum of the chunks')."""
        return math.prod(self._storage.layout.shape)

    @property
    def itemsize(self) -> int:
        """The bytes of one element."""
        return self._storage.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """The bytes of the value, ``size * itemsize`` (chunks that overlap hold more)."""
        return self.size * self.itemsize


#: ``call_key(x)``: an array's part of a decided call's key (a C call), for op code that
#: keys its own runners (`mdarray._ops.indexing.indexing.getitem`'s views).
call_key: Callable[[Stored], tuple] = attrgetter("_call_key")


def decided_key(op: Any, inputs: tuple, kwargs: dict) -> tuple | None:
    """The key of a call of `op` for `mdarray._core.decided`: per input its layout (by id),
    mode, dtype and backend, or a Python scalar's kind (an int's sign and bit length, a
    bool's value: what NumPy's promotion reads of them), and ``out``'s the same; None for
    a call that takes no runner (other operands or keywords, several outputs). Beside a
    partial operand a Python number's facts join the key (`_mode_rules.host_facts`:
    what a mode rule may read of its value)."""
    key: list = [op]
    partial = scalar = False
    part: Any
    for x in inputs:
        kind = type(x)
        if isinstance(x, Stored):
            part = x._call_key
            partial = partial or part[1] is not REPLICA
        elif kind is float or kind is complex:
            part, scalar = kind, True
        elif kind is int:
            part, scalar = (int, x < 0, (~x if x < 0 else x).bit_length()), True
        elif kind is bool:
            part, scalar = (bool, x), True
        else:
            return None
        key.append(part)
    if kwargs:
        out = kwargs.get("out")
        if len(kwargs) != 1 or out is None or len(out) != 1 or not isinstance(out[0], Stored):
            return None
        key.append(("out", out[0]._call_key))
    if partial and scalar:
        key.extend(host_facts(x) for x in inputs if type(x) in (int, float, complex))
    return tuple(key)


def decided_call(op: Any, inputs: tuple, kwargs: dict) -> Any:
    """The result of a call by the runner of its key (`mdarray._core.decided`), or None: no
    runner yet, a run of several processes, or the runner sends the call the whole way."""
    entry = RUNNERS.get(decided_key(op, inputs, kwargs))  # type: ignore[arg-type]
    if entry is None or _processes.current() is not None:
        return None
    return entry[0](inputs, kwargs.get("out"))


def _value_part(x: Any) -> Any:
    kind = type(x)
    if kind is int or kind is bool or kind is str or x is None or kind is type:
        return (kind, x)
    if kind is float:
        return (float, x.hex())
    if kind is tuple:
        parts = tuple(_value_part(v) for v in x)
        return None if None in parts else (tuple, parts)
    if isinstance(x, np.dtype):
        return (np.dtype, x)
    return None


def decided_function(func: Any, args: tuple, kwargs: dict) -> Any:
    """The result of a call of the function `func` by the runner of its key
    (`mdarray._core.decided`: a key's first call asks `func`'s decider for one), or None: no
    decider, a run of several processes, an argument no key holds, or the runner sends
    the call the whole way."""
    decider = DECIDERS.get(func)
    if decider is None or _processes.current() is not None:
        return None
    # The key, made here (no frame of its own): per array operand its part as in
    # `decided_key`; every other argument by type and value (an axis, a dtype, a scalar:
    # a function may decide by any of them), a float by its bits (``0.0`` and ``-0.0``
    # differ); none where an argument is none of these (lists, NumPy arrays, complex
    # numbers...): that call goes the whole way.
    parts: list = [func]
    for x in args:
        part = x._call_key if isinstance(x, Stored) else _value_part(x)
        if part is None:
            return None
        parts.append(part)
    for name, x in kwargs.items():
        part = x._call_key if isinstance(x, Stored) else _value_part(x)
        if part is None:
            return None
        parts.append((name, part))
    key = tuple(parts)
    entry = RUNNERS.get(key)
    if entry is None:
        try:
            runner = decider(args, kwargs) or never
        except Exception:  # the whole way raises it, each time
            return None
        operands = (*args, *kwargs.values())
        remember(key, runner, tuple(x.layout for x in operands if isinstance(x, Stored)))
        return runner(args, kwargs)
    return entry[0](args, kwargs)


def _unpickled(kind: type[Stored], storage: Chunks, mode: Mode, group: tuple[int, ...]) -> Any:
    """An unpickled array of `kind`: its device group keeps the pickled one's devices that
    exist here (its chunks' devices all do, or unpickling raised naming those missing)."""
    out = kind._new(storage, mode)
    backend = storage.backend
    present = tuple(d for d in group if d in backend.device_ids)
    if present != storage.layout.devices:
        out._group = DeviceSet(present, backend.name)
    return out
