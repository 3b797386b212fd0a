"""The zero-copy exports of a DistArray's memory to other libraries: CUDA's array
interface and DLPack (``__dlpack__``, ``__dlpack_device__``). A view of the whole value
is exported where one array can be it; DLPack otherwise exports a gathered copy. The
memory exported becomes the array's own (`Chunks.export`): the consumer and the array see
each other's writes, no other array does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mdarray._storage.local import all_here

if TYPE_CHECKING:
    from mdarray._core.modes import Mode
    from mdarray._layouts.layout import Device, Layout
    from mdarray._storage.chunks import Chunks

    from .array import DistArray


class Exports:
    """The export protocols of a DistArray (a mixin: `self` is a DistArray)."""

    __slots__ = ()

    if TYPE_CHECKING:  # DistArray's

        @property
        def storage(self) -> Chunks: ...
        @property
        def shape(self) -> tuple[int, ...]: ...
        @property
        def size(self) -> int: ...
        @property
        def mode(self) -> Mode: ...
        @property
        def layout(self) -> Layout: ...
        def to_device(self, device: Device, /, *, stream: Any = None) -> DistArray: ...

    def all_chunks(self) -> dict[int, list[Any]]:
        """``{device: [chunk array, ...]}``: the chunk buffers, in index-map order."""
        out: dict[int, list[Any]] = {}
        for device, array in zip(self.layout.chunk_devices, self.storage.buffers):
            out.setdefault(device, []).append(array)
        return out

    def _single_chunk(self, protocol: str, error: type[Exception]) -> Any:
        # One chunk holds every element once, so its copy is the value in any mode.
        buffers = self.storage.buffers
        if len(buffers) != 1 or buffers[0].shape != self.shape:
            raise error(
                f"{protocol} needs the whole value in one chunk on one device; this array has "
                f"{len(buffers)} chunks in mode {self.mode}: gather it with "
                "x.reshard(mdarray.Layout.replicated(x.shape, devices=[d])) or x.get() first"
            )
        return self.storage.export()[0]  # seen outside: this array's own memory from now

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        """CUDA's array interface, a zero-copy export: only for an array whose whole value
        is one chunk on one CUDA device; AttributeError otherwise (``hasattr`` is False)."""
        backend = self.storage.backend
        if backend.name != "cuda":
            raise AttributeError("__cuda_array_interface__ exists only for arrays on CUDA devices")
        chunk = self._single_chunk("__cuda_array_interface__", AttributeError)
        # A consumer orders itself after the caller's current stream (the interface's
        # "stream"): order that stream after mdarray's work on the chunk first.
        backend.export_to_current(self.layout.chunk_devices[0])
        return chunk.__cuda_array_interface__

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: tuple[int, int] | None = None,
        dl_device: tuple[int, int] | None = None,
        copy: bool | None = None,
    ) -> Any:
        """The DLPack export of the value, without a copy where one array views it all
        (`_exported_view`: one chunk, or chunks lying in place in one allocation). Else,
        unless ``copy=False`` forbids a copy, the value gathered onto the first chunk's
        device as one new array, and that exported (the standard's copying export, which
        ``np.from_dlpack`` / ``cupy.from_dlpack`` take). ``copy=True`` exports a copy
        made on the device; ``copy=False`` with a `dl_device` other than the value's
        raises BufferError (that needs a copy)."""
        kwargs: dict[str, Any] = {"stream": stream} if stream is not None else {}
        if max_version is not None:
            kwargs["max_version"] = max_version
        if dl_device is not None:
            kwargs["dl_device"] = dl_device
        device = self.layout.chunk_devices[0]
        if (view := self._exported_view()) is not None:
            chunk, device = view
        elif copy is False:
            raise BufferError(
                f"__dlpack__ (copy=False): no one array views this value, its "
                f"{len(self.layout.boxes)} chunks (mode {self.mode}) do not lie in place in "
                "one allocation of one device: export with copy=None or copy=True (a gathered "
                "copy), or gather it first with "
                "x.reshard(mdarray.Layout.replicated(x.shape, devices=[d]))"
            )
        else:  # gathered (a chunk may come along unchanged: copied below where copy=True)
            chunk = self.to_device(device).storage.export()[0]  # (copied where x's memory)
        backend = self.storage.backend
        if copy is False:
            here = tuple(chunk.__dlpack_device__())
            if dl_device is not None and tuple(dl_device) != here:
                raise BufferError(
                    f"__dlpack__ (copy=False): the value is on DLPack device {here}, and "
                    f"an export to {tuple(dl_device)} needs a copy"
                )
            kwargs["copy"] = False
        elif copy:
            # A copy made here: CuPy's own copy=True exports only to the CPU.
            with backend.on(device):
                chunk = chunk.copy()
        backend.export_to_current(device)
        return chunk.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        """The device a DLPack export is on: the first chunk's (see `__dlpack__`)."""
        return self.storage.buffers[0].__dlpack_device__()

    def _exported_view(self) -> tuple[Any, int] | None:
        """``(array, device)``: one array of the backend viewing the whole value, where its
        chunks (each element in one) lie in place in one allocation (`Backend.span`; the
        cpu backend's arrays made together), read-only where a chunk is, and the device
        of the chunk at its origin; else None. With each element in one chunk, that copy
        is the value in any mode. The memory is made this array's own and kept so
        (`Chunks.export`): the consumer may write, and sees this array's later writes."""
        storage, layout = self.storage, self.layout
        if layout.has_overlaps or not all_here():
            return None
        if not self.size:  # no elements: any chunk viewed in the value's shape
            return storage.buffers[0].reshape(self.shape), layout.chunk_devices[0]
        held = [k for k, box in enumerate(layout.boxes) if all(box)]
        starts = [tuple(r.start for r in layout.boxes[k]) for k in held]
        span = storage.backend.span
        if span([storage.buffers[k] for k in held], starts, self.shape) is None:
            return None  # (asked first: an export is for good)
        exported = storage.export()  # may move them: asked again
        buffers = [exported[k] for k in held]
        if (whole := span(buffers, starts, self.shape)) is None:
            return None
        read_only = storage.backend.read_only_arrays and len(buffers) > 1
        if read_only and not all(b.flags.writeable for b in buffers):
            whole.flags.writeable = False
        origin = next(k for k, start in zip(held, starts) if not any(start))
        return whole, layout.chunk_devices[origin]
