"""The public call: each is one agreed step of an SPMD run, made at the array layer's
boundary.

DistArray's protocols and methods are public calls (`collective`); so are the
namespaces' functions (`entry`: the group a call starting now runs in as one step, and
`runs_here`: whether a function runs as it is or takes the fallback) and callables the
namespace hands out (`fuse`'s objects, `collective`). `per_process` marks a public
function's arguments that differ between processes by design, for the collective-call
check. Op code makes no public call of its own: it runs inside one.
"""

from __future__ import annotations

from mdarray._spmd.processes import collective, entry, per_process, runs_here

__all__ = ["collective", "entry", "per_process", "runs_here"]
