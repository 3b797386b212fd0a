"""How two operands' blocks meet along the contracted axis of a product: where one side
holds that axis whole in every block and the other splits it, the splitting side can be
gathered into strips spanning it (``A @ v``), so each block multiplies once and the
product needs no partial sums. Pure functions of blocks (boxes of ranges)."""

from __future__ import annotations

from itertools import pairwise

from mdarray._core import regions as _regions


def contracted_whole(
    blocks_a: tuple, size_a: int, blocks_b: tuple, size_b: int, k_full, out_bytes: int
):
    """The blocks of two REPLICA operands with the contracted axis made whole on the side
    that splits it, where the other side holds it whole in every block and the splitting
    side is no larger than the smallest of those blocks or than the product (`out_bytes`).

    ``A @ v`` with A in row blocks (each holding its rows' whole k) and v split along k
    then gathers v beside each row block (DTensor's Shard(0) @ Replicate) instead of
    cutting A into strided sub-blocks whose products are partial sums: one kernel per
    block, a REPLICA result, no combine after it, and no more bytes fetched per task than
    the task reads of its own block. A strip (the blocks of one batch and column range,
    or row range on the left) is fetched whole (no holder chunk); where the strips do not
    tile the contracted axis, or both sides split it, the blocks stay.

    ``A @ B`` of two row-split square matrices so gathers B beside each row block of A
    (DTensor's and JAX's choice too): the partial sums the blocks would give instead are
    as large as the product, and making them whole moves at least as many bytes as
    gathering B does, after smaller, slower kernels (on 4 devices 16 products of 512x512 by 512x2048
    in place of 4 of 512x2048 by 2048x2048)."""

    def smallest(blocks, size) -> int:
        return min(_regions.box_size(box) for box, _ in blocks) * size

    def total(blocks, size) -> int:
        return sum(_regions.box_size(box) for box, _ in blocks) * size

    a_whole = all(box[-1] == k_full for box, _ in blocks_a)
    if a_whole and total(blocks_b, size_b) <= max(smallest(blocks_a, size_a), out_bytes):
        merged = strips(blocks_b, -2, k_full)
        return blocks_a, blocks_b if merged is None else merged
    b_whole = all(box[-2] == k_full for box, _ in blocks_b)
    if (
        not a_whole
        and b_whole
        and total(blocks_a, size_a) <= max(smallest(blocks_b, size_b), out_bytes)
    ):
        merged = strips(blocks_a, -1, k_full)
        return blocks_a if merged is None else merged, blocks_b
    return blocks_a, blocks_b


def strips(blocks: tuple, axis: int, k_full: range) -> tuple | None:
    """`blocks` grouped by their ranges on every axis but `axis` (the contracted one) into
    strips spanning `k_full` there, with no holder chunk; None where a group's ranges
    along `axis` do not tile `k_full`, or nothing would change (every block whole)."""
    if all(box[axis] == k_full for box, _ in blocks):
        return None
    groups: dict = {}
    for box, _ in blocks:
        rest = box[:axis] + box[axis:][1:] if axis == -2 else box[:-1]
        groups.setdefault(rest, []).append(box[axis])
    out = []
    for rest, ranges in groups.items():
        ranges.sort(key=lambda r: r.start)
        if ranges[0].start != 0 or ranges[-1].stop != k_full.stop:
            return None
        if any(r.step != 1 for r in ranges) or any(q.start != r.stop for r, q in pairwise(ranges)):
            return None
        box = (*rest[:-1], k_full, rest[-1]) if axis == -2 else (*rest, k_full)
        out.append((box, ()))
    return tuple(out)
