"""Storage: the buffers of one layout on their devices, and who else uses their memory.

`Chunks` is what a DistArray stores: a `Layout`, a backend, a dtype and one buffer (a NumPy
or CuPy array) per chunk, on its device. It checks what it is given, keeps *packed* storage
(one flat slab per device, the chunks views into it: an elementwise op runs one kernel per
device), and keeps copy on write exact with views:

- A *family* is one logical array value: an array and its views (indexing, transposes,
  reshapes that need no copy). Its members see each other's writes, as NumPy's views do.
  `view` makes a member of this family.
- Movement hands unchanged buffers to its result instead of copying them (a reshard that
  keeps a chunk in place, a mode change that needs no change). `derive` makes such a
  result: a new family that shares memory with this one.
- Memory is tracked per *allocation* (a chunk's own array or a packed slab), with the
  families using it (weakly, so the count follows their lifetimes). Each buffer is an
  allocation and a *recipe* (the view of it the chunk is). `writable` moves a family that
  shares an allocation with another live family onto a copy of it before handing buffers
  out: every member switches to the copy, so the writer's views stay attached and no
  other array sees the write.

Chunks that nobody shares and nobody viewed carry none of this; the first `view` or
`derive` sets it up. A view by slices or a transpose joins its family late (`_join`), read
until then from its source. One lock guards the bookkeeping: threads share arrays.

In an SPMD run a process holds only its own devices' buffers; another's chunk (and slab)
is a `Remote`, which knows its shape and dtype.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

import numpy as np

from mdarray._backends.backend import Backend
from mdarray._core.limits import native
from mdarray._core.recording import Recording
from mdarray._layouts.layout import Layout
from mdarray._spmd.processes import Remote, current

from .memory import (
    Allocation,
    Family,
    as_slabs,
    block_view,
    check_buffers,
    check_slabs,
    copied_in,
    copied_memories,
    fill_remote,
    fresh_slabs,
    generated,
    late_buffers,
    loaded,
    made_by,
    own_memories,
    saved,
    slab_recipes,
    unpack,
    viewed_chunks,
    zero_d,
)

_FAMILIES = attrgetter("families")
_LOCK = threading.RLock()  # guards families, allocations and their moves across threads
# Integer type codes equal to another's dtype (longlong is int64 on Linux) mapped to it.
_ALIASES = {c: np.dtype(np.dtype(c).str) for c in "lLqQ" if np.dtype(np.dtype(c).str).char != c}


class Chunks:
    """The buffers of `layout` on its devices (see the module docstring).

    Build with `of` (checked buffers), `made` (new ones), `packed` (slabs), `empty`,
    `full`, `from_host`, `generate`, `map`, `derive` (memory shared with this one) or
    `view` (a view of this one); write `buffers` only through `writable`. A Chunks
    belongs to one array.
    """

    __slots__ = (
        "__weakref__",
        "_block_views",
        "_born",
        "_buffers",
        "_family",
        "_origin",
        "_pending",
        "_refs",
        "_seen",
        "_slab_allocations",
        "_slabs",
        "backend",
        "dtype",
        "layout",
    )

    def __init__(self, layout: Layout, backend: Backend, dtype, buffers=None, slabs=None) -> None:
        # Unchecked: the classmethods check what they are given.
        self.layout = layout
        self.backend = backend
        self.dtype = _ALIASES.get(dtype.char, dtype)
        self._buffers = buffers
        self._slabs = slabs
        # Set up by the first `view` or `derive` (see `_track`): the family, per chunk its
        # (allocation, recipe), and for packed chunks the slabs' allocations.
        self._family: Family | None = None
        self._refs: tuple | None = None
        self._slab_allocations: tuple | None = None
        # Set by `select`: (a weak reference to the source, the selection's token).
        self._origin: tuple | None = None
        self._pending: tuple | None = None  # a late view's (source, groups, make): `_late`
        self._seen: tuple | None = None  # the source's buffers a late view's were read from
        self._block_views: tuple | None = None  # these slabs' views: see `slab_blocks`
        self._born = Recording.epoch  # (`Recording`: whether its memory may move)

    # Construction ---------------------------------------------------------------------

    @classmethod
    def of(cls, layout: Layout, buffers: Sequence, backend: Backend, dtype=None, *,
           check=True) -> Chunks:  # fmt: skip
        """Chunks holding `buffers` (one per chunk, in layout order), checked: count,
        shapes, dtypes (`dtype` or the first buffer's) and devices; ``check=False``: as
        `packed`'s (a cached plan's kernels made them in the shapes it planned)."""
        if not check:
            buffers = list(buffers)
            for k, b in enumerate(buffers):
                if isinstance(b, np.generic) or not hasattr(b, "shape"):
                    buffers[k] = zero_d(b)
            return cls(layout, backend, np.dtype(dtype), tuple(buffers))
        # NumPy's kernels give scalars for 0-d operands: a chunk is a writable 0-d array.
        buffers = tuple(
            zero_d(b) if isinstance(b, np.generic) or not hasattr(b, "shape") else b
            for b in buffers
        )
        dtype = check_buffers(layout, buffers, dtype, backend)
        return cls(layout, backend, dtype, buffers)

    @classmethod
    def packed(cls, layout: Layout, slabs: Sequence, backend: Backend, dtype, *,
               check=True, blocks=None) -> Chunks:  # fmt: skip
        """Packed chunks: one flat slab per device of `layout` (`Layout.packing`), owned by
        the result alone. ``check=False`` is for slabs a kernel just made from checked
        operands (the elementwise fast path, where the checks cost a third of a call);
        `blocks`, the device blocks the slabs flatten, are kept for `slab_blocks`."""
        slabs = tuple(slabs)
        dtype = np.dtype(dtype)
        if check:
            check_slabs(layout, slabs, dtype, backend)
        out = cls(layout, backend, dtype, None, slabs)
        if blocks is not None and (keys := layout.slab_block_keys) is not None:
            out._block_views = (slabs, {id(keys): (keys, tuple(blocks)), **dict(zip(keys, blocks))})
            if len(layout.chunks) == len(slabs):  # a chunk per device: its block
                out._buffers = tuple(blocks)
        return out

    @classmethod
    def made(cls, layout: Layout, buffers: Sequence, backend: Backend, dtype) -> Chunks:
        """Unchecked chunks of `buffers` kernels just made for this result alone: packed
        where they are slabs (`memory.as_slabs`: later calls take the slab path)."""
        got = as_slabs(layout, buffers)
        if got is None:
            return cls.of(layout, buffers, backend, dtype, check=False)
        return cls.packed(layout, got[0], backend, dtype, check=False, blocks=got[1])

    @classmethod
    def empty(cls, layout: Layout, dtype, backend: Backend) -> Chunks:
        """Fresh packed chunks with unspecified values (`memory.fresh_slabs`)."""
        dtype, slabs = fresh_slabs(layout, dtype, backend, None)
        return cls(layout, backend, dtype, None, slabs)

    @classmethod
    def full(cls, layout: Layout, value, dtype, backend: Backend) -> Chunks:
        """Fresh packed chunks filled with `value`."""
        dtype, slabs = fresh_slabs(layout, dtype, backend, (value,))
        return cls(layout, backend, dtype, None, slabs)

    @classmethod
    def from_host(cls, array, layout: Layout, backend: Backend) -> Chunks:
        """Packed chunks of `array`'s parts by `layout` (any array NumPy takes), copied in."""
        if not backend.is_native(array):
            array = np.asarray(array)
        if not array.dtype.isnative:  # a file format's big-endian data (`_limits`)
            array = array.astype(native(array.dtype))
        out = cls.empty(layout, array.dtype, backend)
        copied_in(array, layout, backend, out.buffers)
        return out

    @classmethod
    def generate(cls, layout: Layout, backend: Backend, make: Callable[[int], Any],
                 dtype) -> Chunks:  # fmt: skip
        """Chunks whose buffer `k` is ``make(k)`` (on its device), cast to `dtype`."""
        dtype = None if dtype is None else np.dtype(dtype)
        buffers = generated(layout, backend, make, dtype)
        return cls.of(layout, fill_remote(layout, buffers, dtype), backend, dtype)

    def derive(self, layout: Layout | None = None, buffers=None, dtype=None) -> Chunks:
        """New Chunks (checked) of `buffers` in `layout` (both default to this one's): a
        new array value, which shares memory with this one where a buffer is one of this
        one's (copy on write keeps their writes apart)."""
        layout = self.layout if layout is None else layout
        if self._pending is not None:  # a late view joins its family first (`_join`)
            _tracked(self)
        buffers = self.buffers if buffers is None else tuple(buffers)
        mine = {id(b): k for k, b in enumerate(self.buffers)}
        if getattr(self._family, "exported", False):  # memory seen outside: copies, not shared
            copy, devices = self.backend.copy, layout.chunk_devices
            buffers = [copy(b, devices[t]) if id(b) in mine else b for t, b in enumerate(buffers)]
        out = Chunks.of(layout, buffers, self.backend, self.dtype if dtype is None else dtype)
        if not any(id(b) in mine for b in out.buffers):
            return out
        with _LOCK:
            self._track()
            assert self._refs is not None
            family = Family()
            family.members[weakref.ref(out, family.members.pop)] = None
            refs = []
            for t, buffer in enumerate(out.buffers):
                k = mine.get(id(buffer))
                ref = self._refs[k] if k is not None else (
                    (Allocation(buffer, layout.chunk_devices[t], self.backend), ()))  # fmt: skip
                ref[0].families[weakref.ref(family, ref[0].families.pop)] = None
                refs.append(ref)
            out._family, out._refs = family, tuple(refs)
        return out

    def view(
        self, layout: Layout, make: Callable[[int, Any], Any], sources=None, dtype=None
    ) -> Chunks:
        """Chunks of `layout`, chunk t ``make(t, buffer)`` of this one's chunk ``sources[t]``
        (default t) on its device: a view of this array where `make` makes views (a slice,
        a transpose, a reshape; of `dtype` where given, a field of a structured array), so
        writes through either reach the other as with NumPy's; a copy is the view's own."""
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        with _LOCK:
            family = self._track()
            assert self._refs is not None
            xp, buffers, devices = self.backend.xp, self.buffers, self.layout.chunk_devices
            out_buffers: list = []
            refs: list[tuple[Allocation, tuple]] = []
            for t, k in enumerate(range(len(buffers)) if sources is None else sources):
                if isinstance(buffers[k], Remote):
                    made = Remote(layout.chunk_shapes[t], dtype, devices[k])
                    out_buffers.append(made)
                    refs.append((Allocation(made, devices[k], self.backend), ()))
                    continue
                with self.backend.on(devices[k]):
                    made = make(t, buffers[k])
                out_buffers.append(made)
                if made.size and not xp.may_share_memory(made, buffers[k]):
                    refs.append((Allocation(made, devices[k], self.backend), ()))
                else:
                    allocation, recipe = self._refs[k]
                    refs.append((allocation, (*recipe, made_by(make, t))))
            out = Chunks.of(layout, out_buffers, self.backend, dtype)
            out._family, out._refs = family, tuple(refs)
            family.members[weakref.ref(out, family.members.pop)] = None
            for allocation, _ in refs:
                allocation.families[weakref.ref(family, allocation.families.pop)] = None
        return out

    def remap(self, layout: Layout, make: Callable[[int, Any], Any], token=None) -> Chunks:
        """`view` for a `make` that always makes a view of its chunk (a transpose): chunk
        t ``make(t, chunk t)``, joining late (`_join`); `token` names it for `remapped`.
        Runs of several processes take `view`."""
        if current() is not None:
            return self.view(layout, make)
        return self._late(
            layout, None, make, None if token is None else (weakref.ref(self), token, None)
        )

    def remapped(self) -> tuple | None:
        """``(source, token)`` where this is ``source.remap(..., token)`` of a living
        source (a family moves as a whole: the same remapping now), else None."""
        origin = self._origin or (None, None, True)
        source = None if origin[2] is not None else origin[0]()
        return None if source is None else (source, origin[1])

    def select(self, layout: Layout, groups: tuple, token, block_keys=None) -> Chunks:
        """The view of `layout` whose chunks are basic-indexing views of this one's (`view`
        unchecked: a cached plan guarantees the shapes; joining late, `_join`; SPMD runs
        take `view`): `groups` is ``((device, ((t, k, index, getter), ...)), ...)``, chunk
        t ``buffer k[index]`` (of ints, slices and an Ellipsis), `getter` its ``operator.
        itemgetter`` (None: all of chunk k); `token` names it for `is_view_of`;
        `block_keys` where its device blocks lie in this array's slabs (`view_blocks`)."""
        if current() is not None:
            entries = sorted(entry for _, group in groups for entry in group)
            out = self.view(layout, lambda t, b: b[entries[t][2]], [e[1] for e in entries])
            out._origin = (weakref.ref(self), token, None)
            return out
        return self._late(layout, groups, None, (weakref.ref(self), token, block_keys))

    def _late(self, layout: Layout, groups: tuple | None, make, origin: tuple | None) -> Chunks:
        """A view of this array joining its family late (`_join`): an untracked source
        stays so (its memory is its own), a late one joins now (joins never chain), and a
        view on fewer devices joins at once (a held source keeps every device's memory)."""
        if self._pending is not None:
            _tracked(self)
        out = Chunks(layout, self.backend, self.dtype)
        out._pending, out._origin = (self, groups, make), origin
        if layout.devices != self.layout.devices:
            _tracked(out)
        return out

    def view_blocks(self) -> tuple | None:
        """Per device, this view's device block made from its source's memory without
        joining the family: a selection's in the source's packed slab (`slab_source`), a
        late remap's (a chunk per device) its view of the source's chunk; else None."""
        pending = self._pending
        if pending is not None and pending[2] is not None:  # a late remap
            source, _, make = pending
            if self.layout.chunk_devices == self.layout.devices == source.layout.chunk_devices:
                return tuple([make(t, chunk) for t, chunk in enumerate(source.buffers)])
            return None
        origin = self._origin or (None, None, None)  # (`slab_source`, inline: every block read)
        source = None if origin[2] is None else origin[0]()
        return None if source is None or source._slabs is None else source.slab_blocks(origin[2])

    def slab_source(self) -> tuple | None:
        """``(packed Chunks, keys)``: its own slabs and keys, or a selection's source's."""
        if self._slabs is not None:
            return None if (keys := self.layout.slab_block_keys) is None else (self, keys)
        origin = self._origin or (None, None, None)
        source = None if origin[2] is None else origin[0]()
        return None if source is None or source._slabs is None else (source, origin[2])

    def slab_blocks(self, keys: tuple) -> tuple:
        """Per device, `block_view` by `keys`' ``(slab, shape, index)``, kept per keys."""
        slabs, kept = self._slabs, self._block_views
        if kept is None or kept[0] is not slabs:
            kept = self._block_views = (slabs, {})
        got = kept[1].get(id(keys))
        if got is None or got[0] is not keys:
            if len(kept[1]) >= 16:
                kept[1].clear()
            got = kept[1][id(keys)] = (keys, tuple([block_view(slabs, k, kept[1]) for k in keys]))
        return got[1]

    def is_view_of(self, source: Chunks, token) -> bool:
        """Whether `source.select(..., token)` made this view: its chunks are then that
        selection of `source`'s, now as then (a family moves as a whole)."""
        return (o := self._origin) is not None and o[1] == token and o[0]() is source

    def _track(self) -> Family:
        """The family, set up with the chunks' allocations where there was none (`_LOCK`)."""
        if (family := self._family) is not None:
            return family
        if self._pending is not None:
            return self._join()
        layout = self.layout
        if self._slabs is not None:  # packed: their slabs' parts, tracked or not (no buffers)
            return self._attach_slabs(own_memories(self._slabs, layout.devices, self.backend))
        buffers = self.buffers  # made before the refs: they stay the chunk buffers
        return self._attach(
            [(Allocation(b, d, self.backend), ()) for b, d in zip(buffers, layout.chunk_devices)]
        )

    def _join(self) -> Family:
        """A late view (`_late`) put in its source's family (`_LOCK`): refs read from the
        source's now are what they would have become (a family moves as a whole). Until
        then it holds its source and is read from it (`buffers`, `view_blocks`)."""
        source, groups, make = self._pending  # type: ignore[misc]
        family = source._track()
        refs = source._refs
        out: list
        if groups is None:  # `remap`: chunk t a view of the source's chunk t
            out = [(a, (*recipe, made_by(make, t))) for t, (a, recipe) in enumerate(refs)]
        else:
            out = [None] * len(self.layout.chunk_devices)
            for _, entries in groups:
                for t, k, _, getter in entries:
                    ref = refs[k]  # a whole chunk (getter None) is its source's chunk
                    out[t] = ref if getter is None else (ref[0], (*ref[1], getter))
        self._family, self._refs, self._pending, self._seen = family, tuple(out), None, None
        family.members[weakref.ref(self, family.members.pop)] = None
        return family

    def _attach_slabs(self, slabs: Sequence[Allocation]) -> Family:
        """Track packed chunks as parts of the allocations `slabs` (one per device)."""
        return self._attach([(slabs[i], r) for i, r in slab_recipes(self.layout)], tuple(slabs))

    def _attach(self, refs: Sequence, slabs: tuple | None = None) -> Family:
        """A new family of this one member, on `refs` (per chunk: allocation, recipe)."""
        family = Family()
        family.members[weakref.ref(self, family.members.pop)] = None
        for allocation in slabs or next(zip(*refs), ()):  # each allocation once
            allocation.families[weakref.ref(family, allocation.families.pop)] = None
        self._refs = tuple(refs)
        self._slab_allocations = slabs
        self._family = family
        return family

    # Copies and pickles ---------------------------------------------------------------

    def copied(self, memo: dict | None = None) -> Chunks:
        """An independent copy, made on the devices (same layout, dtype and packing). With a
        ``copy.deepcopy`` `memo`, memory arrays copied together share stays shared by their
        copies (copy on write keeps their writes apart); object elements are copied too."""
        memories, parts, tracked = self._saved()
        memories = copied_memories(memories, memo)
        return loaded(type(self), self.layout, self.backend, self.dtype, memories, parts, tracked)

    __copy__ = __deepcopy__ = copied

    def __reduce__(self) -> tuple:
        """Pickled as its value: layout, backend name, dtype and each allocation the
        chunks use once, with where each chunk lies in it (`_memory.saved`)."""
        if current() is not None:
            raise TypeError(
                "a DistArray cannot be pickled in a run of several processes (each holds "
                "only its own chunks): pickle x.get() instead"
            )
        memories, parts, tracked = self._saved()
        return (
            loaded,
            (type(self), self.layout, self.backend.name, self.dtype, memories, parts, tracked),
        )

    def _saved(self) -> tuple:
        """``(memories, parts, tracked)``: the allocations these chunks use, where each
        chunk lies in them (`_memory.saved`; parts None for packed chunks, one memory per
        slab), and whether copy on write tracks them."""
        layout = self.layout
        with _LOCK:
            if self._pending is not None:
                self._join()
            if self._family is None:
                if self._slabs is not None:
                    return own_memories(self._slabs, layout.devices, self.backend), None, False
                memories = own_memories(self.buffers, layout.chunk_devices, self.backend)
                return memories, [(k, None) for k in range(len(memories))], False
            if self._slabs is not None:
                return list(self._slab_allocations or ()), None, True
            assert self._refs is not None
            memories, parts = saved(self.buffers, self._refs, layout.chunk_devices, self.backend)
            return memories, parts, True

    def map(self, fn: Callable, *columns: Sequence, dtype=None) -> Chunks:
        """Fresh Chunks of this layout: buffer k ``fn(buffer k, *(c[k] for c in columns))``
        on chunk k's device, cast to `dtype` where the kernel gave another."""
        on = self.backend.on
        out: list = []
        for k, (buffer, device) in enumerate(zip(self.buffers, self.layout.chunk_devices)):
            if isinstance(buffer, Remote):
                out.append(None)
                continue
            with on(device):
                result = fn(buffer, *(c[k] for c in columns))
                if dtype is not None and result.dtype != dtype:
                    result = result.astype(dtype)
            out.append(result)
        return Chunks.of(self.layout, fill_remote(self.layout, out, dtype), self.backend, dtype)

    # Reading --------------------------------------------------------------------------

    @property
    def buffers(self) -> tuple:
        """The chunk buffers in layout order (views into the slabs of packed chunks); a
        late view's read from its source's as they are now, without joining (`_late`)."""
        buffers = self._buffers
        if (pending := self._pending) is not None:
            source = pending[0].buffers  # (a family moves as a whole: new ones, new reads)
            if buffers is None or self._seen is not source:
                buffers = self._buffers = late_buffers(self.layout, self.backend, source, pending)
                self._seen = source
        elif buffers is None:
            buffers = self._buffers = self._resolve()
        return buffers

    def _resolve(self) -> tuple:
        layout, slabs = self.layout, self._slabs
        if slabs is not None:  # their slabs' parts, tracked or not (`_move` keeps the two)
            return unpack(layout, slabs)
        out = []
        for k, (allocation, recipe) in enumerate(self._refs or ()):
            array = allocation.array
            if isinstance(array, Remote):
                array = Remote(layout.chunk_shapes[k], self.dtype, allocation.device)
            else:
                with self.backend.on(allocation.device):
                    for step in recipe:  # however many views led here, one after another
                        array = step(array)
            out.append(array)
        return tuple(out)

    # Read by C code (`attrgetter`, as `stored.reader`), typed as what it reads.
    slabs: tuple | None = property(
        attrgetter("_slabs"), doc="One flat slab per device of the layout, when packed; else None."
    )  # type: ignore[assignment]

    # Writing --------------------------------------------------------------------------

    def writable(self, chunks: Sequence[int] | None = None) -> tuple:
        """The buffers, ready to be written in place: where one of `chunks` (default all)
        lives in memory another array value uses too, this family moves to a copy of it
        first (its views come along; the other array keeps the original)."""
        self.make_writable(chunks)
        return self.buffers

    def make_writable(self, chunks: Sequence[int] | None = None) -> None:
        """`writable` without making the buffers (a write through blocks or slabs)."""
        if self._family is None:
            if (pending := self._pending) is not None:  # a late view: its source's memory
                source = pending[0]  # (untracked, or packed sharing none: no Python call)
                slabs = source._slab_allocations
                if source._family is not None and (
                    slabs is None or max(map(len, map(_FAMILIES, slabs))) > 1
                ):
                    source.make_writable(viewed_chunks(pending[1], chunks))
            return
        with _LOCK:
            assert self._refs is not None
            seen = None  # a packed slab's chunks follow one another: one check for them
            for k in range(len(self._refs)) if chunks is None else chunks:
                allocation = self._refs[k][0]
                if allocation is not seen and len(allocation.families) > 1:
                    self._move(allocation)
                seen = allocation

    def apart_from(self, written: Chunks) -> bool:
        """Whether this memory cannot meet `written`'s (just made writable): a late view's
        is its source's, and memory no family tracks is its own Chunks' (every array copies
        what it is made from): other sources untracked, or in different families."""
        mine = self if self._pending is None else self._pending[0]
        other = written if written._pending is None else written._pending[0]
        family, theirs = mine._family, other._family
        return mine is not other and (family is None or theirs is None or family is not theirs)

    def own_slabs(self) -> tuple | None:
        """Packed chunks' slabs to write in place (copies first where others use them)."""
        if self._slabs is None or self._family is None:
            return self._slabs
        with _LOCK:
            for allocation in self._slab_allocations or ():
                if len(allocation.families) > 1:
                    self._move(allocation)
        return self._slabs

    def refill(self, slabs: Sequence) -> None:
        """Make `slabs` (new, one per device as this layout packs it) these packed chunks'
        memory: a write computed into new memory committed (the family's views follow;
        another array that shared the old memory keeps it)."""
        if Recording.thread is not None and Recording.here():
            Recording.check([self] if self._family is None else self._family.members.living())
        with _LOCK:
            if self._family is None:
                self._slabs, self._buffers, self._block_views = tuple(slabs), None, None
                return
            for allocation, slab in zip(self._slab_allocations or (), slabs):
                self._move(allocation, slab)

    def export(self) -> tuple:
        """The buffers, to be viewed outside mdarray (DLPack, the CUDA array interface):
        made this value's own as for a write, and kept so (`Family.exported`)."""
        with _LOCK:
            self._track().exported = True
            self.make_writable()  # (its own memory: others sharing it move, as for a write)
        return self.buffers

    def _move(self, allocation: Allocation, array=None) -> None:
        """Move this family off `allocation` onto a copy of it, or onto `array` (new memory
        of its shape holding what the family writes), under `_LOCK`; memory seen outside
        mdarray (`export`) stays, `array` copied into it."""
        family = self._family
        assert family is not None
        if Recording.thread is not None and Recording.here():
            Recording.check(family.members.living())
        if family.exported and array is not None:
            with self.backend.on(allocation.device):
                self.backend.assign(allocation.array, (), array)
            return
        if array is None:
            array = allocation.array
            if not isinstance(array, Remote):  # another process's memory: nothing to copy
                array = self.backend.copy(array, allocation.device)
        copy = Allocation(array, allocation.device, self.backend)
        allocation.families.pop(weakref.ref(family), None)
        copy.families[weakref.ref(family, copy.families.pop)] = None
        for member in family.members.living():
            refs = member._refs or ()
            if not any(a is allocation for a, _ in refs):
                continue
            member._refs = tuple((copy if a is allocation else a, r) for a, r in refs)
            member._buffers = None
            if member._slab_allocations is not None:
                member._slab_allocations = tuple(
                    copy if a is allocation else a for a in member._slab_allocations
                )
                member._slabs = tuple(a.array for a in member._slab_allocations)
                member._block_views = None


def _tracked(chunks: Chunks) -> Family:
    """`chunks`' family, set up (`Chunks._track`, under `_LOCK`) where there was none."""
    if (family := chunks._family) is not None:
        return family
    with _LOCK:
        return chunks._track()
