"""Waiting, memory and time: `mdarray.synchronize`, `DistArray.block_until_ready`,
`mdarray.memory_report` and `mdarray.profile` (`mdarray._runtime.profile`,
`mdarray._storage.memory_report`)."""

import gc
import io
import json
import threading

import numpy as np
import pytest

import mdarray


def _two():
    devices = mdarray.devices()
    return list(devices[:2]) if len(devices) > 1 else [devices[0]]


def _array(host):
    return mdarray.distributed_array(host, mdarray.Layout.block(host.shape, devices=_two()))


# synchronize and block_until_ready ---------------------------------------------------


@pytest.mark.parametrize(
    "form",
    [
        lambda: None,
        lambda: mdarray.devices()[0],
        lambda: np.int64(mdarray.devices()[-1]),
        lambda: list(mdarray.devices()),
        lambda: iter(mdarray.devices()),
        lambda: mdarray.DeviceSet(mdarray.devices()),
        lambda: mdarray.ones(4).device,
    ],
    ids=["none", "int", "numpy-int", "list", "iterator", "deviceset", "x.device"],
)
def test_synchronize_takes_every_device_form(form):
    x = _array(np.arange(8.0))
    y = x * 2
    assert mdarray.synchronize(form()) is None
    np.testing.assert_array_equal(y.get(), np.arange(8.0) * 2)


def test_synchronize_refuses_an_unknown_device_naming_it():
    unknown = len(mdarray.devices()) + 7
    with pytest.raises(ValueError, match=f"device {unknown} is not a device of the"):
        mdarray.synchronize(unknown)
    with pytest.raises(ValueError, match=f"device {unknown} is not"):
        mdarray.synchronize([mdarray.devices()[0], unknown])


@pytest.mark.parametrize("bad", ["0", 1.0, True, object()])
def test_synchronize_refuses_what_is_no_device(bad):
    with pytest.raises(TypeError, match=r"synchronize|device id"):
        mdarray.synchronize(bad)


def test_synchronize_refuses_another_backends_device_set():
    other = "cuda" if mdarray.default_backend() == "cpu" else "cpu"
    with pytest.raises(ValueError, match=f"of the {other} backend"):
        mdarray.synchronize(mdarray.DeviceSet([0], backend=other))


def test_block_until_ready_returns_the_array_itself():
    host = np.arange(12.0).reshape(3, 4)
    x = _array(host)
    y = np.exp(x)
    assert y.block_until_ready() is y
    np.testing.assert_allclose(y.get(), np.exp(host))


# memory_report -------------------------------------------------------------------------


def _block(nbytes: int) -> int:
    """The bytes of the memory block holding `nbytes` of one chunk: NumPy allocates them
    exactly, CuPy's pool rounds each allocation up to 512 bytes."""
    return nbytes if mdarray.default_backend() == "cpu" else -(-nbytes // 512) * 512


def _held():
    gc.collect()
    return mdarray.memory_report().arrays


def test_memory_report_changes_by_exactly_an_arrays_bytes():
    devices = _two()
    before = _held()
    x = mdarray.distributed_array(np.zeros(1000), mdarray.Layout.block((1000,), devices=devices))
    during = _held()
    per_device = _block(8000 // len(devices))
    for d in mdarray.devices():
        assert during[d] - before[d] == (per_device if d in devices else 0)
    del x
    assert _held() == before


def test_memory_report_counts_shared_memory_once():
    devices = _two()
    before = _held()
    x = mdarray.distributed_array(
        np.arange(600.0).reshape(20, 30), mdarray.Layout.block((20, 30), devices=devices)
    )
    grown = {d: n - before[d] for d, n in _held().items()}
    assert sum(grown.values()) == len(devices) * _block(x.nbytes // len(devices))
    views = [x[2:9], x.T, x[:, ::3], x.reshape(600)]
    same = x.reshard(x.layout)  # copy on write: the same buffers until written
    assert {d: n - before[d] for d, n in _held().items()} == grown
    same[0, 0] = -1.0  # the write moves `same` onto its own copy of device 0's slab
    grown[devices[0]] += _block(x.nbytes // len(devices))
    assert {d: n - before[d] for d, n in _held().items()} == grown
    assert x[0, 0] == 0.0
    assert same[0, 0] == -1.0
    del x, views, same
    assert _held() == before


def test_memory_report_prints_a_table_and_gives_a_dict():
    report = mdarray.memory_report()
    assert set(report.as_dict()) == set(mdarray.devices())
    assert all(row["arrays"] == report.arrays[d] for d, row in report.as_dict().items())
    text = str(report)
    assert text == repr(report)
    assert text.splitlines()[0].startswith(f"mdarray memory ({mdarray.default_backend()}")
    assert len(text.splitlines()) == 2 + len(mdarray.devices())
    # CuPy's pool, or the cpu backend's pool of large results (`mdarray._backends.cpu.pool`).
    assert all(used <= total for used, total in report.pool.values())


# profile -------------------------------------------------------------------------------


def _rows(p):
    return {row["name"]: row for row in p.summary()}


def test_profile_records_names_counts_and_values():
    host = np.arange(24.0).reshape(4, 6)
    x = _array(host)
    with mdarray.profile() as p:
        for _ in range(3):
            y = x + 1.0
        s = np.sum(y, axis=0)
        t = mdarray.sum(y)
        part = x[1:3]
    np.testing.assert_array_equal(s.get(), (host + 1).sum(axis=0))
    assert float(t) == (host + 1).sum()
    np.testing.assert_array_equal(part.get(), host[1:3])
    rows = _rows(p)
    assert {name: row["calls"] for name, row in rows.items()} == {"add": 3, "sum": 2, "getitem": 1}
    assert [c.name for c in p.calls] == ["add"] * 3 + ["sum", "sum", "getitem"]
    for row in rows.values():
        assert row["total"] > 0
        assert row["mean"] == pytest.approx(row["total"] / row["calls"])
    totals = [row["total"] for row in p.summary()]
    assert totals == sorted(totals, reverse=True)
    if mdarray.default_backend() == "cpu":
        assert not p.device_timed
        assert all(c.device is None for c in p.calls)


def test_profile_counts_a_nested_public_call_once():
    x = _array(np.arange(10.0))
    with mdarray.profile() as p:
        m = x.mean()  # mean calls sum and divide inside
        v = np.var(x)
        c = mdarray.cumulative_sum(x)
    assert float(m) == 4.5
    assert float(v) == np.var(np.arange(10.0))
    np.testing.assert_array_equal(c.get(), np.cumsum(np.arange(10.0)))
    assert [call.name for call in p.calls] == ["mean", "var", "cumulative_sum"]


def test_profile_marks_the_fallback():
    host = np.arange(8.0)
    x = _array(host)
    saved = io.BytesIO()
    with mdarray.options(fallback="allow"), mdarray.profile() as p:
        np.save(saved, x)
        native = x * 2.0
    np.testing.assert_array_equal(np.load(io.BytesIO(saved.getvalue())), host)
    np.testing.assert_array_equal(native.get(), host * 2)
    rows = _rows(p)
    assert rows["save"]["fallbacks"] == 1
    assert rows["multiply"]["fallbacks"] == 0
    assert "fallbacks" in str(p).splitlines()[1]


def test_profile_bytes_moved_match_count_transfers():
    host = np.arange(64.0).reshape(8, 8)
    x = _array(host)
    target = mdarray.Layout.replicated(x.shape, devices=x.devices)

    def work():
        return x.reshard(target), x.get(), mdarray.sum(x, axis=1)

    with mdarray.count_transfers() as counted:
        work()
    with mdarray.profile() as p:
        r, h, s = work()
    np.testing.assert_array_equal(r.get(), host)
    np.testing.assert_array_equal(h, host)
    np.testing.assert_array_equal(s.get(), host.sum(axis=1))
    moved: dict = {}
    for call in p.calls:
        for pair, n in call.moved.items():
            moved[pair] = moved.get(pair, 0) + n
    assert moved == {pair: n for pair, n in counted.bytes.items() if n}
    assert counted.total > 0
    assert sum(row["moved"] for row in p.summary()) == counted.total
    assert _rows(p)["reshard"]["moved"] == x.reshard_cost(target).total


def test_profile_records_nothing_outside_its_block():
    x = _array(np.arange(6.0))
    x + 1
    with mdarray.profile() as p:
        x * 2
    x - 1
    mdarray.sum(x)
    assert [c.name for c in p.calls] == ["multiply"]
    with mdarray.profile() as empty:
        pass
    assert empty.calls == []
    assert str(empty).startswith("mdarray profile: 0 calls")


def test_profile_sees_only_its_own_thread():
    x = _array(np.arange(6.0))
    done = []
    with mdarray.profile() as p:
        worker = threading.Thread(target=lambda: done.append((x + 1).get()))
        worker.start()
        worker.join()
        x * 3
    assert [c.name for c in p.calls] == ["multiply"]
    np.testing.assert_array_equal(done[0], np.arange(6.0) + 1)


def test_profile_records_a_failed_call_and_opens_cleanly_after():
    x = _array(np.arange(6.0))
    with mdarray.profile() as p:
        with pytest.raises(ValueError, match="cannot reshape"):
            x.reshape(4, 4)
        x + 1
    assert [(c.name, c.failed) for c in p.calls] == [("reshape", True), ("add", False)]


def test_nested_profiles_both_record():
    x = _array(np.arange(6.0))
    with mdarray.profile() as outer:
        x + 1
        with mdarray.profile() as inner:
            x * 2
    assert [c.name for c in outer.calls] == ["add", "multiply"]
    assert [c.name for c in inner.calls] == ["multiply"]


def test_chrome_trace_has_one_event_per_call(tmp_path):
    x = _array(np.arange(16.0))
    with mdarray.profile() as p:
        y = x + 1
        np.sum(y)
        y[3] = 0.0
    path = tmp_path / "trace.json"
    p.to_chrome_trace(path)
    with path.open() as file:
        trace = json.load(file)
    host = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["tid"] == 0]
    assert [e["name"] for e in host] == ["add", "sum", "setitem"]
    for event, call in zip(host, p.calls):
        assert event["dur"] == pytest.approx(call.host * 1e6)
        assert event["ts"] >= 0
    assert host[0]["ts"] + host[0]["dur"] <= host[1]["ts"] <= host[2]["ts"]
    devices = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["tid"] != 0]
    assert len(devices) == (len(p.calls) * len(mdarray.devices()) if p.device_timed else 0)
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    assert names[0] == "host"


def test_the_printed_table_is_sorted_and_aggregated():
    x = _array(np.arange(1000.0))
    with mdarray.profile() as p:
        for _ in range(4):
            x + 1
        np.sort(x)
    lines = str(p).splitlines()
    assert lines[0].startswith(f"mdarray profile: {len(p.calls)} calls")
    assert lines[1].split()[:3] == ["operation", "calls", "total"]
    body = [line.split() for line in lines[2:]]
    assert sorted((row[0], int(row[1])) for row in body) == [("add", 4), ("sort", 1)]
    totals = [float(row[2]) for row in body]
    assert totals == sorted(totals, reverse=True)
    assert repr(p) == str(p)
