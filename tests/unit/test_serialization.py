"""minitorch.save / minitorch.load: exact round trips, a documented format, atomic
writes, and a clear SerializationError (never code execution) for any bad file."""

from __future__ import annotations

import builtins
import hashlib
import importlib
import io
import json
import math
import os
import pickle
import struct
from collections import OrderedDict

import numpy as np
import pytest

import minitorch
from minitorch import nn, serialization
from minitorch.serialization import SerializationError, load, save

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]
SHAPES = [(), (0,), (5,), (2, 0, 3), (3, 4), (2, 3, 1, 2)]


def values(shape: tuple, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.startswith("float"):
        return np.asarray(rng.standard_normal(shape), dtype=dtype)
    info = np.iinfo(dtype)
    return np.asarray(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))


def roundtrip(obj, tmp_path, **kwargs):
    path = tmp_path / "obj.mt"
    save(obj, path)
    return load(path, **kwargs)


def assert_same_tensor(got, expected: np.ndarray) -> None:
    assert isinstance(got, minitorch.Tensor)
    assert got.dtype.name == expected.dtype.name
    assert got.shape == expected.shape
    assert got.detach().numpy().tobytes() == np.ascontiguousarray(expected).tobytes()  # bit-exact


def optimizer_state() -> dict:
    """The shape of an Adam state dict: int keys, a tuple, nested per-param state."""
    return {
        "state": {
            0: {"step": 3, "exp_avg": minitorch.randn(3, 2), "exp_avg_sq": minitorch.rand(3, 2)},
            1: {"step": 3, "exp_avg": minitorch.randn(2), "exp_avg_sq": minitorch.rand(2)},
        },
        "param_groups": [
            {"params": [0, 1], "lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "amsgrad": False}
        ],
    }


def sample_file(tmp_path) -> tuple:
    path = tmp_path / "good.mt"
    save({"weight": minitorch.randn(4, 3), "step": 7, "name": "linear"}, path)
    return path, path.read_bytes()


# --- round trips --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_tensor_round_trip_is_bit_exact(tmp_path, dtype, shape):
    expected = values(shape, dtype)
    got = roundtrip({"t": minitorch.from_numpy(expected)}, tmp_path)["t"]
    assert_same_tensor(got, expected)


def test_special_float_values_survive(tmp_path):
    expected = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324, 65504], dtype=np.float64)
    assert_same_tensor(roundtrip(minitorch.from_numpy(expected), tmp_path), expected)
    half = expected.astype(np.float16)
    assert_same_tensor(roundtrip(minitorch.from_numpy(half), tmp_path), half)


def test_views_keep_their_layout_and_share_their_storage(tmp_path):
    # catches: views saved as contiguous copies (strides lost, writes no longer shared), as
    # torch.save keeps them
    base = minitorch.arange(24, dtype=minitorch.float32).reshape(4, 6)
    views = {
        "base": base,
        "T": base.T,
        "strided": base[::2, 1::2],
        "row": base[1],
        "expanded": base[0:1].expand(3, 6),
    }
    got = roundtrip(views, tmp_path)
    for name, view in views.items():
        assert_same_tensor(got[name], np.array(view.numpy()))
        assert got[name].stride() == view.stride(), name
        assert got[name].storage_offset() == view.storage_offset(), name
    got["base"][1, 1] = -1.0  # one storage for all of them, as in the saved object
    assert got["row"][1].item() == -1.0 and got["T"][1, 1].item() == -1.0
    assert got["strided"][0, 0].item() == 1.0 and base[1, 1].item() == 7.0


def test_the_same_tensor_twice_loads_as_one_tensor_apart_from_the_original(tmp_path):
    t = minitorch.zeros(3)
    got = roundtrip({"a": t, "b": t, "c": minitorch.zeros(3)}, tmp_path)
    assert got["a"] is got["b"] and got["c"] is not got["a"]
    got["a"][0] = 5.0  # writable, and the original is untouched
    assert got["c"].tolist() == [0.0, 0.0, 0.0] and t.tolist() == [0.0, 0.0, 0.0]


def test_parameters_and_requires_grad_survive_a_round_trip(tmp_path):
    # catches: a Parameter loaded as a plain tensor, requires_grad dropped (torch keeps both)
    p, frozen = nn.Parameter(minitorch.ones(2)), nn.Parameter(minitorch.ones(2), False)
    leaf = minitorch.ones(2, requires_grad=True)
    got = roundtrip([p, frozen, leaf, leaf * 2, minitorch.ones(2)], tmp_path)
    assert [type(t).__name__ for t in got] == ["Parameter", "Parameter"] + ["Tensor"] * 3
    assert [t.requires_grad for t in got] == [True, False, True, True, False]
    assert all(t.is_leaf for t in got)  # a saved non-leaf loads as a leaf, as in PyTorch


def test_nested_structure_and_key_types_are_preserved(tmp_path):
    obj = {
        "ints": {0: "zero", -3: "minus", 2**70: "big"},
        "floats": {0.5: 1, float("inf"): 2},
        "bools": {True: "t", False: "f"},
        "none": {None: None},
        "scalars": [0, -1, 2**70, 1.5, -0.0, float("inf"), float("-inf"), True, False, None],
        "strings": ["", "héllo ✓", "a\x00b", "\ud800"],
        "tuples": (1, (2, [3, (4,)]), ()),
        "empties": [[], {}, ()],
    }
    got = roundtrip(obj, tmp_path)
    assert got == obj
    assert type(got["tuples"]) is tuple and type(got["tuples"][1][1]) is list
    assert [type(k) for k in got["ints"]] == [int, int, int]
    assert [type(k) for k in got["bools"]] == [bool, bool]
    assert [type(v) for v in got["scalars"]] == [type(v) for v in obj["scalars"]]
    assert math.copysign(1, got["scalars"][4]) == -1.0
    assert list(got) == list(obj)  # order kept
    nan = roundtrip({"x": float("nan")}, tmp_path)["x"]
    assert math.isnan(nan)


def test_optimizer_state_round_trip(tmp_path):
    state = optimizer_state()
    got = roundtrip(state, tmp_path)
    assert list(got["state"]) == [0, 1]
    assert got["param_groups"] == state["param_groups"]
    assert isinstance(got["param_groups"][0]["betas"], tuple)
    for i in (0, 1):
        assert got["state"][i]["step"] == 3
        for k in ("exp_avg", "exp_avg_sq"):
            assert_same_tensor(got["state"][i][k], state["state"][i][k].numpy())


def test_state_dict_of_ordered_dict_with_grad_tensors(tmp_path):
    w = minitorch.randn(2, 3, requires_grad=True)
    got = roundtrip(OrderedDict(weight=w, bias=minitorch.zeros(2)), tmp_path)
    assert type(got) is dict and list(got) == ["weight", "bias"]
    assert_same_tensor(got["weight"], w.detach().numpy())
    assert got["weight"].requires_grad and got["weight"].is_leaf


def test_file_objects_and_str_paths(tmp_path):
    obj = {"w": minitorch.randn(3)}
    buffer = io.BytesIO()
    save(obj, buffer)
    buffer.seek(0)
    assert_same_tensor(load(buffer)["w"], obj["w"].numpy())
    save(obj, str(tmp_path / "s.mt"))
    with open(tmp_path / "s.mt", "rb") as f:
        assert f.read() == buffer.getvalue()  # same bytes either way: the format is deterministic
    with open(tmp_path / "s.mt") as text, pytest.raises(TypeError, match="binary"):
        load(text)


def test_the_file_layout_matches_the_documented_format(tmp_path):
    t = minitorch.tensor([[1, 2, 3]], dtype=minitorch.int16)
    path = tmp_path / "f.mt"
    save({"a": 1.5, 2: (t, None)}, path)
    data = path.read_bytes()
    assert data[:10] == b"MINITORCH\x00"
    version, header_len = struct.unpack("<IQ", data[10:22])
    assert version == 2
    header_end = 22 + header_len
    assert data[header_end : header_end + 32] == hashlib.sha256(data[:header_end]).digest()
    header = json.loads(data[22:header_end])
    entry = {"type": "tensor", "id": 0, "storage": 0, "shape": [1, 3], "stride": [3, 1]}
    entry.update(storage_offset=0, requires_grad=False, parameter=False)
    item = {"type": "tuple", "items": [entry, None]}
    assert header == {
        "data_nbytes": 6,
        "storages": [{"dtype": "int16", "offset": 0, "nbytes": 6}],
        "object": {"type": "dict", "items": [["a", 1.5], [2, item]]},
    }
    start = -(-(header_end + 32) // 64) * 64
    assert data[header_end + 32 : start] == bytes(start - header_end - 32)
    assert data[start : start + 6] == struct.pack("<3h", 1, 2, 3)
    assert data[start + 6 :] == hashlib.sha256(data[: start + 6]).digest()


def test_tensor_offsets_are_aligned(tmp_path):
    path = tmp_path / "a.mt"
    save([minitorch.ones(3, dtype=minitorch.int8), minitorch.ones(5), minitorch.ones(0)], path)
    header_len = struct.unpack("<Q", path.read_bytes()[14:22])[0]
    storages = json.loads(path.read_bytes()[22 : 22 + header_len])["storages"]
    assert [e["offset"] for e in storages] == [0, 64, 128]


# --- map_location ---------------------------------------------------------------------------
def test_map_location(tmp_path):
    save({"w": minitorch.ones(2)}, tmp_path / "m.mt")
    for where in (None, "cpu", minitorch.device("cpu")):
        assert load(tmp_path / "m.mt", map_location=where)["w"].device == minitorch.device("cpu")
    with pytest.raises(ValueError, match="unknown device"):
        load(tmp_path / "m.mt", map_location="tpu")
    with pytest.raises(TypeError, match="map_location"):
        load(tmp_path / "m.mt", map_location=3)
    # PyTorch's dict and function forms: every tensor comes from location "cpu"
    assert load(tmp_path / "m.mt", map_location={"cuda:0": "cuda:1"})["w"].device.type == "cpu"
    seen = []
    out = load(tmp_path / "m.mt", map_location=lambda t, where: seen.append(where) or t * 2)
    assert seen == ["cpu"] and out["w"].tolist() == [2.0, 2.0]


@pytest.mark.gpu
@pytest.mark.skipif(not minitorch.cuda.is_available(), reason="needs cupy and a CUDA GPU")
def test_cuda_tensors_save_from_host_and_load_to_map_location(tmp_path):
    expected = values((3, 4), "float32")
    cuda = minitorch.from_numpy(expected).to("cuda")
    save({"w": cuda, "v": cuda.T}, tmp_path / "g.mt")
    cpu = load(tmp_path / "g.mt")
    assert cpu["w"].device == minitorch.device("cpu")
    assert_same_tensor(cpu["w"], expected)
    assert_same_tensor(cpu["v"], expected.T)
    gpu = load(tmp_path / "g.mt", map_location="cuda")
    assert gpu["w"].device == minitorch.device("cuda:0")
    np.testing.assert_array_equal(gpu["v"].cpu().numpy(), expected.T)


# --- what can't be saved --------------------------------------------------------------------
class Custom:
    pass


@pytest.mark.parametrize(
    "obj, where, what",
    [
        ({"layers": [1, 2, {"fn": lambda x: x}]}, r"obj\['layers'\]\[2\]\['fn'\]", "function"),
        ({"model": Custom()}, r"obj\['model'\]", "Custom"),
        ([np.zeros(3)], r"obj\[0\]", "from_numpy"),
        ({"s": {1, 2}}, r"obj\['s'\]", "set"),
        ({(1, 2): 3}, "obj has a key of type tuple", "keys"),
    ],
)
def test_unsupported_objects_name_their_path(tmp_path, obj, where, what):
    path = tmp_path / "bad.mt"
    with pytest.raises(SerializationError, match=where) as err:
        save(obj, path)
    assert what in str(err.value)
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a temp file


def test_reference_cycles_are_refused(tmp_path):
    loop: list = [1]
    loop.append({"again": loop})
    with pytest.raises(SerializationError, match=r"obj\[1\]\['again'\] contains itself"):
        save(loop, tmp_path / "c.mt")
    shared = [1]
    assert roundtrip({"a": shared, "b": shared}, tmp_path) == {"a": [1], "b": [1]}


# --- atomic writes ----------------------------------------------------------------------------
class FailingFile:
    """Wraps a file and raises after ``limit`` bytes, like a disk filling up."""

    def __init__(self, f, limit: int) -> None:
        self.f, self.limit, self.written = f, limit, 0

    def write(self, chunk) -> int:
        chunk = bytes(chunk)
        if self.written + len(chunk) > self.limit:
            self.f.write(chunk[: self.limit - self.written])
            raise OSError(28, "No space left on device")
        self.written += len(chunk)
        return self.f.write(chunk)


@pytest.mark.parametrize("limit", [0, 30, 300])
@pytest.mark.parametrize("error", [OSError, KeyboardInterrupt])
def test_a_failed_save_leaves_the_previous_file_intact(tmp_path, monkeypatch, limit, error):
    path = tmp_path / "ckpt.mt"
    save({"epoch": 1, "w": minitorch.ones(100)}, path)
    before = path.read_bytes()
    real_write = serialization._write

    def failing_write(out, header, arrays):
        if error is KeyboardInterrupt:
            out.write(b"MINITORCH\x00partial")
            raise KeyboardInterrupt
        real_write(FailingFile(out, limit), header, arrays)

    monkeypatch.setattr(serialization, "_write", failing_write)
    with pytest.raises(error):
        save({"epoch": 2, "w": minitorch.zeros(100)}, path)
    assert path.read_bytes() == before
    assert load(path)["epoch"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.mt"]  # no temp file left behind


def test_save_replaces_and_fsyncs(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.mt"
    save({"epoch": 1}, path)
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    save({"epoch": 2}, path)
    assert load(path) == {"epoch": 2}
    assert len(synced) >= 1
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt.mt"]


def test_saving_onto_a_directory_fails_cleanly(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(OSError):
        save({"a": 1}, tmp_path / "d")
    assert [p.name for p in tmp_path.iterdir()] == ["d"]


# --- bad files: a clear SerializationError, and no code runs ---------------------------------
def expect_error(path, *phrases: str) -> str:
    with pytest.raises(SerializationError) as err:
        load(path)
    message = str(err.value)
    assert str(path) in message
    assert any(p in message for p in phrases), message
    return message


@pytest.mark.parametrize("keep", [1, 9, 10, 15, 22, 40, -200, -33, -32, -31, -1])
def test_truncated_files(tmp_path, keep):
    path, data = sample_file(tmp_path)
    path.write_bytes(data[:keep])
    expect_error(path, "truncated")


def test_header_region_layout_of_the_sample(tmp_path):
    """The flip positions below land where their names say."""
    _, data = sample_file(tmp_path)
    header_len = struct.unpack("<Q", data[14:22])[0]
    assert header_len > 60 and len(data) > 22 + header_len + 32 + 48 + 32


@pytest.mark.parametrize(
    "where, phrases",
    [
        (lambda d, h: 0, ("not a minitorch file",)),
        (lambda d, h: 9, ("not a minitorch file",)),
        (lambda d, h: 10, ("version",)),
        (lambda d, h: 14, ("corrupt", "truncated")),  # header length, low byte
        (lambda d, h: 21, ("corrupt", "truncated")),  # header length, high byte
        (lambda d, h: 30, ("corrupt",)),  # inside the JSON header
        (lambda d, h: 22 + h - 1, ("corrupt",)),  # last header byte
        (lambda d, h: 22 + h + 5, ("corrupt",)),  # header checksum
        (lambda d, h: 22 + h + 32, ("corrupt",)),  # padding (if any) or first data byte
        (lambda d, h: len(d) - 40, ("corrupt",)),  # tensor data
        (lambda d, h: len(d) - 1, ("corrupt",)),  # final checksum
    ],
)
def test_a_flipped_byte_is_detected(tmp_path, where, phrases):
    path, data = sample_file(tmp_path)
    at = where(data, struct.unpack("<Q", data[14:22])[0])
    path.write_bytes(data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :])
    expect_error(path, *phrases)


def test_every_single_bit_flip_is_caught(tmp_path):
    path, data = sample_file(tmp_path)
    for at in range(len(data)):
        for bit in (0x01, 0x80):
            corrupt = data[:at] + bytes([data[at] ^ bit]) + data[at + 1 :]
            with pytest.raises(SerializationError):
                load(io.BytesIO(corrupt))


def test_extra_bytes_after_the_end(tmp_path):
    path, data = sample_file(tmp_path)
    path.write_bytes(data + b"\x00")
    expect_error(path, "1 unexpected bytes after its end")


class PlantsMarker:
    """Unpickling this creates a directory: proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_a_pickle_file_is_refused_and_runs_no_code(tmp_path):
    live = tmp_path / "live-marker"
    pickle.loads(pickle.dumps(PlantsMarker(str(live))))
    assert live.exists()  # the payload really does run code when unpickled

    marker = tmp_path / "marker"
    for protocol in (0, 2, pickle.HIGHEST_PROTOCOL):
        path = tmp_path / f"evil{protocol}.pt"
        path.write_bytes(pickle.dumps({"w": PlantsMarker(str(marker))}, protocol=protocol))
        message = expect_error(path, "is not a minitorch file")
        assert "never loads pickle files" in message and "arbitrary code" in message
        assert not marker.exists()
    assert "like a pickle" in expect_error(tmp_path / "evil2.pt", "pickle")


def test_a_torch_zip_file_is_refused(tmp_path):
    path = tmp_path / "model.pt"
    path.write_bytes(b"PK\x03\x04" + bytes(100))
    assert "torch.save" in expect_error(path, "is not a minitorch file")


def test_random_bytes_and_empty_files(tmp_path):
    path = tmp_path / "noise.bin"
    path.write_bytes(np.random.default_rng(0).bytes(1000))
    expect_error(path, "is not a minitorch file")
    path.write_bytes(b"")
    expect_error(path, "is empty")
    path.write_bytes(b"MINITORCH\x00" + bytes(2000))
    expect_error(path, "version 0")
    path.write_bytes(b"MINITORCH\x00" + struct.pack("<IQ", 3, 0) + bytes(100))
    expect_error(path, "newer minitorch")


def test_loading_uses_no_pickle_eval_exec_or_imports(tmp_path, monkeypatch):
    path, _ = sample_file(tmp_path)
    bad = tmp_path / "bad.mt"
    bad.write_bytes(pickle.dumps(PlantsMarker(str(tmp_path / "m"))))

    def forbidden(*args, **kwargs):
        raise AssertionError("load must not use pickle, eval, exec or importlib")

    with monkeypatch.context() as patch:
        for module, name in [
            (pickle, "loads"),
            (pickle, "load"),
            (pickle, "Unpickler"),
            (builtins, "eval"),
            (builtins, "exec"),
            (builtins, "compile"),
            (importlib, "import_module"),
        ]:
            patch.setattr(module, name, forbidden)
        got = load(path)
        with pytest.raises(SerializationError):
            load(bad)
    assert got["step"] == 7 and got["weight"].shape == (4, 3)
    assert not (tmp_path / "m").exists()


# --- well-formed files with a bad header: each check has its own message ---------------------
def packed(header, data: bytes = b"") -> io.BytesIO:
    """A file with valid checksums around any header, as a hostile writer could make."""
    raw = header if isinstance(header, bytes) else json.dumps(header).encode()
    head = b"MINITORCH\x00" + struct.pack("<IQ", 1, len(raw)) + raw
    head += hashlib.sha256(head).digest()
    body = head + bytes(-len(head) % 64) + data
    f = io.BytesIO(body + hashlib.sha256(body).digest())
    f.name = "crafted.mt"
    return f


def tensor_entry(**changes) -> dict:
    entry = {"type": "tensor", "dtype": "float32", "shape": [2], "offset": 0, "nbytes": 8}
    return {**entry, **changes}


def packed_v2(obj, storages, data: bytes) -> io.BytesIO:
    """A version 2 file with valid checksums around any header."""
    raw = json.dumps({"data_nbytes": len(data), "storages": storages, "object": obj}).encode()
    head = b"MINITORCH\x00" + struct.pack("<IQ", 2, len(raw)) + raw
    head += hashlib.sha256(head).digest()
    body = head + bytes(-len(head) % 64) + data
    f = io.BytesIO(body + hashlib.sha256(body).digest())
    f.name = "crafted.mt"
    return f


def view_entry(**changes) -> dict:
    entry = {"type": "tensor", "id": 0, "storage": 0, "shape": [2], "stride": [1]}
    entry.update(storage_offset=0, requires_grad=False, parameter=False)
    return {**entry, **changes}


@pytest.mark.parametrize(
    "entry, phrase",
    [
        (view_entry(shape=[3]), "past the end"),
        (view_entry(storage_offset=1), "past the end"),
        (view_entry(stride=[-1]), "stride must be"),
        (view_entry(stride=[1, 1]), "stride"),
        (view_entry(storage=1), "not one of the file's storages"),
        (view_entry(requires_grad=1), "true or false"),
        (view_entry(id=-1), "id must be"),
    ],
)
def test_a_crafted_view_that_reads_outside_its_storage_is_refused(entry, phrase):
    storages = [{"dtype": "float32", "offset": 0, "nbytes": 8}]
    assert load(packed_v2(view_entry(), storages, bytes(8))).tolist() == [0.0, 0.0]
    with pytest.raises(SerializationError, match=phrase):
        load(packed_v2(entry, storages, bytes(8)))
    ints = [{"dtype": "int32", "offset": 0, "nbytes": 8}]
    with pytest.raises(SerializationError, match="can't require grad"):
        load(packed_v2(view_entry(requires_grad=True), ints, bytes(8)))


def test_a_crafted_good_file_loads():
    got = load(packed({"data_nbytes": 8, "object": tensor_entry()}, struct.pack("<2f", 1, 2)))
    assert got.tolist() == [1.0, 2.0]


@pytest.mark.parametrize(
    "header, data, phrase",
    [
        (b"{not json", b"", "not valid UTF-8 JSON"),
        (b"\xff\xfe", b"", "not valid UTF-8 JSON"),
        (b'{"data_nbytes": 0, "object": NaN}', b"", "not valid UTF-8 JSON"),
        (b"[" * 100_000 + b"]" * 100_000, b"", "nested too deeply"),
        ([1, 2], b"", "malformed header"),
        ({"data_nbytes": 0}, b"", "malformed header"),
        ({"data_nbytes": -1, "object": None}, b"", "data_nbytes"),
        ({"data_nbytes": True, "object": None}, b"", "data_nbytes"),
        ({"data_nbytes": 8, "object": tensor_entry(dtype="object")}, bytes(8), "unknown dtype"),
        ({"data_nbytes": 8, "object": tensor_entry(dtype="complex64")}, bytes(8), "unknown dtype"),
        ({"data_nbytes": 8, "object": tensor_entry(nbytes=4)}, bytes(8), "does not match shape"),
        ({"data_nbytes": 8, "object": tensor_entry(shape=[3])}, bytes(8), "does not match shape"),
        ({"data_nbytes": 8, "object": tensor_entry(shape=[-2])}, bytes(8), "shape must be"),
        ({"data_nbytes": 8, "object": tensor_entry(shape="2")}, bytes(8), "shape must be"),
        ({"data_nbytes": 8, "object": tensor_entry(offset=4)}, bytes(8), "outside"),
        ({"data_nbytes": 8, "object": tensor_entry(offset=-64)}, bytes(8), "counts"),
        (
            {"data_nbytes": 0, "object": tensor_entry(shape=[0, 2**62, 2**62], nbytes=0)},
            b"",
            "shape",
        ),
        ({"data_nbytes": 8, "object": {"type": "tensor", "dtype": "float32"}}, bytes(8), "needs"),
        ({"data_nbytes": 0, "object": {"type": "pickle", "data": "gASV"}}, b"", "unknown"),
        ({"data_nbytes": 0, "object": {"x": 1}}, b"", "typed entry"),
        ({"data_nbytes": 0, "object": {"type": "float", "value": "1e3"}}, b"", "unknown"),
        ({"data_nbytes": 0, "object": {"type": "dict", "items": [[[1], 2]]}}, b"", "dict key"),
        ({"data_nbytes": 0, "object": {"type": "dict", "items": [[1, 2, 3]]}}, b"", "pair"),
        ({"data_nbytes": 0, "object": {"type": "tuple", "items": 3}}, b"", "unknown"),
        ({"data_nbytes": 64, "object": None}, bytes(8), "truncated"),
    ],
)
def test_malformed_headers_are_named(header, data, phrase):
    with pytest.raises(SerializationError, match="crafted.mt") as err:
        load(packed(header, data))
    assert phrase in str(err.value)


def test_nested_path_in_malformed_header_message():
    obj = {"type": "dict", "items": [["layers", [None, tensor_entry(dtype="float128")]]]}
    with pytest.raises(SerializationError, match=r"at obj\['layers'\]\[1\]: unknown dtype"):
        load(packed({"data_nbytes": 8, "object": obj}, bytes(8)))


def test_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.mt")
