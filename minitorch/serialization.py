"""Checkpoints without pickle: ``minitorch.save(obj, f)`` and ``minitorch.load(f)``.

``torch.save`` pickles, and unpickling a file can run any code its author chose. A
minitorch file holds only data: a JSON header describing the object, and raw tensor
bytes. Loading parses both and checks them; it never imports, evaluates or unpickles
anything from the file.

What can be saved: nested ``dict``, ``list`` and ``tuple`` of ``str``, ``int``, ``float``,
``bool``, ``None`` and tensors -- state dicts and optimizer state. Dict keys may be
``str``, ``int``, ``float``, ``bool`` or ``None`` and keep their type (optimizer state is
keyed by int). Tuples stay tuples; dict subclasses (``OrderedDict``) load as ``dict``.
Tensors are saved as PyTorch's ``torch.save`` saves them: each storage once, and each
tensor as a view of one (its shape, strides and storage offset), so two views saved
together still share memory when loaded (writing one changes the other), a
non-contiguous tensor keeps its strides, and the same tensor object saved twice loads as
one object. A tensor keeps ``requires_grad`` (a non-leaf loads as a leaf that requires
grad, as in PyTorch) and a ``Parameter`` loads as a ``Parameter``. A cuda tensor is saved
from a host copy. Loaded tensors are on ``map_location`` (default cpu). The file does not
record the device a tensor was saved from:
to ``map_location`` given as PyTorch's dict (``{"cuda:0": "cuda:1"}``) or function
(``lambda storage, location: storage``) every tensor comes from location ``"cpu"``.
``weights_only`` is accepted for PyTorch's sake: minitorch only ever loads data, which
is what ``weights_only=True`` asks of PyTorch.

File format, version 2 (all integers little-endian; version 1 files still load)::

    offset      size  content
    0           10    magic b"MINITORCH\x00"
    10          4     format version, u32 (2)
    14          8     header length H, u64
    22          H     header: UTF-8 JSON (strict: no NaN/Infinity tokens)
    22+H        32    SHA-256 of bytes [0, 22+H): preamble and header
    ...               zero bytes up to D, the next multiple of 64
    D           N     storage data, N = header["data_nbytes"]
    D+N         32    SHA-256 of bytes [0, D+N): everything before it

The header is ``{"data_nbytes": N, "storages": [storage, ...], "object": node}``. A
storage is ``{"dtype": name, "offset": int, "nbytes": int}``: its elements, little-endian,
at bytes ``[D + offset, D + offset + nbytes)``; ``offset`` is a multiple of 64 and
``nbytes`` a multiple of the itemsize. ``dtype`` is one of ``float16 float32 float64 int8
int16 int32 int64 uint8 bool`` (bool: one byte, 0 or 1). A node is

- JSON ``null``, ``true``/``false``, an integer, a finite float or a string: itself;
- a JSON array: a ``list`` of nodes;
- ``{"type": "tuple", "items": [node, ...]}``;
- ``{"type": "dict", "items": [[key, node], ...]}`` (in order; each key is a scalar node);
- ``{"type": "float", "value": "nan" | "inf" | "-inf"}``;
- ``{"type": "tensor", "id": int, "storage": int, "shape": [int, ...], "stride": [int, ...],
  "storage_offset": int, "requires_grad": bool, "parameter": bool}``: a view of storage
  number ``storage`` (strides and offset in elements, every element it reads inside the
  storage); entries with the same ``id`` are one tensor object.

(Version 1 had no storages; its tensor entries were ``{"type": "tensor", "dtype", "shape",
"offset", "nbytes"}``, the elements in C order.)

Saving to a path is atomic: the file is written to a temporary file in the same
directory, flushed and fsync'ed, then renamed over the target with ``os.replace``, so a
failure mid-save leaves the previous file intact (a hard kill can leave a
``.NAME.*.tmp`` file behind, never a half-written ``NAME``). Saving to an open binary
file object writes in place and is not atomic.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import secrets
import struct
from collections.abc import Callable
from typing import IO, Any

import numpy as np

from . import backend
from .creation import from_numpy
from .device import as_device, device
from .dtypes import bool as bool_
from .dtypes import (
    dtype,
    float16,
    float32,
    float64,
    from_numpy_dtype,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from .shape import contiguous_strides
from .storage import Storage, strided_view
from .tensor import Tensor

MAGIC = b"MINITORCH\x00"
VERSION = 2
ALIGN = 64
_PREAMBLE = struct.Struct("<10sIQ")  # magic, version, header length
_DIGEST = 32  # bytes of a SHA-256 digest
_DTYPES = {d.name: d for d in (float16, float32, float64, int8, int16, int32, int64, uint8, bool_)}
_KEY_TYPES = (str, int, float, type(None))  # bool is an int
_NO_PICKLE = (
    "minitorch never loads pickle files (such as those from torch.save or pickle.dump), "
    "because loading a pickle can run arbitrary code; save the model's state_dict() or the "
    "tensors themselves with minitorch.save instead, and load that"
)
#: What every refusal to save an object says can be saved instead.
_SAVE_INSTEAD = (
    "minitorch never pickles (loading a pickle can run arbitrary code), so save a "
    "model's or optimizer's state_dict(), or tensors, or plain values instead"
)

PathOrFile = str | os.PathLike | IO[bytes]


class SerializationError(ValueError):
    """A file that can't be loaded (or an object that can't be saved), and why."""


# --- save -------------------------------------------------------------------------------
def save(obj: Any, f: PathOrFile) -> None:
    """Write ``obj`` (e.g. a state dict) to a path, atomically, or to a binary file object."""
    if not hasattr(f, "write") and not isinstance(f, (str, bytes, os.PathLike)):
        raise TypeError(
            f"save: f must be a path or a binary file object with write(), but got "
            f"{type(f).__name__} {f!r:.40}"
        )
    if not hasattr(f, "write") and os.path.isdir(os.fspath(f)):
        raise IsADirectoryError(f"save: {os.fspath(f)!r} is a directory; give a file name in it")
    header, arrays = _encode(obj)
    if hasattr(f, "write"):
        _write(f, header, arrays)
    else:
        _atomic_write(os.fspath(f), lambda out: _write(out, header, arrays))


def _encode(obj: Any) -> tuple[bytes, list[tuple[int, np.ndarray]]]:
    """The JSON header and the ``(offset, array)`` pairs of the data section."""
    encoder = _Encoder()
    try:
        root = encoder.node(obj, "obj")
    except RecursionError:
        raise SerializationError(
            "save: the object is nested too deeply to save; save a flatter structure instead "
            "(a dict of tensors, as a state_dict() is)"
        ) from None
    header = {"data_nbytes": encoder.nbytes, "storages": encoder.storages, "object": root}
    return json.dumps(header, allow_nan=False).encode("utf-8"), encoder.arrays


class _Encoder:
    """Turns an object into header nodes, collecting each storage's bytes once."""

    def __init__(self) -> None:
        self.arrays: list[tuple[int, np.ndarray]] = []
        self.storages: list[dict] = []
        self.nbytes = 0
        self._open: set[int] = set()  # containers on the current path, to catch cycles
        self._storage_ids: dict[int, int] = {}  # id(Storage) -> its number in the file
        self._tensor_ids: dict[int, int] = {}  # id(Tensor) -> its id in the file
        self._keep: list = []  # what the two maps above hold ids of, alive until the end

    def node(self, x: Any, path: str) -> Any:
        if x is None or type(x) in (bool, int, str):
            return x
        if isinstance(x, (int, str)):  # an IntEnum, a str subclass: save the plain value
            return _base_value(x)
        if isinstance(x, float):
            return float(x) if math.isfinite(x) else {"type": "float", "value": str(float(x))}
        if isinstance(x, Tensor):
            return self.tensor(x, path)
        if isinstance(x, (dict, list, tuple)):
            if id(x) in self._open:
                raise SerializationError(
                    f"save: {path} contains itself (a reference cycle); save a copy without the "
                    "cycle instead (a tree of dicts, lists and tensors)"
                )
            self._open.add(id(x))
            try:
                return self.container(x, path)
            finally:
                self._open.discard(id(x))
        raise SerializationError(
            f"save: can't save {path}, a {_type_name(x)}: a minitorch file holds only dicts, "
            f"lists, tuples, str, int, float, bool, None and Tensors; {_hint(x)}"
        )

    def container(self, x: dict | list | tuple, path: str) -> Any:
        if isinstance(x, dict):
            items = []
            for k, v in x.items():
                if not isinstance(k, _KEY_TYPES):
                    raise SerializationError(
                        f"save: {path} has a key of type {type(k).__name__} ({k!r}); dict keys "
                        "must be str, int, float, bool or None: use str(key) as the key instead"
                    )
                items.append([self.node(k, path), self.node(v, f"{path}[{k!r}]")])
            return {"type": "dict", "items": items}
        nodes = [self.node(v, f"{path}[{i}]") for i, v in enumerate(x)]
        return {"type": "tuple", "items": nodes} if isinstance(x, tuple) else nodes

    def tensor(self, t: Tensor, path: str) -> dict:
        if t.dtype.name not in _DTYPES:
            raise SerializationError(
                f"save: {path} has dtype {t.dtype}, which can't be saved; save it converted "
                f"instead (t.float(), or t.int_repr() for a quantized tensor); saveable dtypes: "
                f"{', '.join(_DTYPES)}"
            )
        from .nn.parameter import Parameter

        if id(t) not in self._tensor_ids:
            self._tensor_ids[id(t)] = len(self._tensor_ids)
            self._keep.append(t)
        storage, shape, stride, offset = _layout(t)
        return {
            "type": "tensor",
            "id": self._tensor_ids[id(t)],
            "storage": self.storage(storage),
            "shape": list(shape),
            "stride": list(stride),
            "storage_offset": offset,
            "requires_grad": bool(t.requires_grad),
            "parameter": isinstance(t, Parameter),
        }

    def storage(self, storage: Storage) -> int:
        """The number of ``storage`` in the file, its bytes collected the first time."""
        if id(storage) not in self._storage_ids:
            array = _host_array(storage.array)
            offset = _align(self.nbytes)
            self.arrays.append((offset, array))
            self.nbytes = offset + array.nbytes
            self._storage_ids[id(storage)] = len(self.storages)
            self._keep.append(storage)
            name = from_numpy_dtype(array.dtype).name
            self.storages.append({"dtype": name, "offset": offset, "nbytes": array.nbytes})
        return self._storage_ids[id(storage)]


def _layout(t: Tensor) -> tuple[Storage, tuple, tuple, int]:
    """The storage ``t`` reads and how (shape, strides, offset in elements). A tensor whose
    array is not that view of its storage (or reads it backwards) gets a storage of its own,
    a contiguous copy of its values."""
    storage, shape, stride, offset = t._storage, tuple(t.shape), tuple(t.stride()), t._offset
    data, flat = t._data, storage.array
    itemsize = flat.itemsize
    same = (
        data.dtype == flat.dtype
        and all(s >= 0 for s in stride)
        and (
            0 in shape
            or (
                backend.of_array(data).data_ptr(data) == storage.data_ptr() + offset * itemsize
                and all(
                    n == 1 or b == s * itemsize
                    for n, b, s in zip(shape, data.strides, stride, strict=True)
                )
            )
        )
    )
    if same:
        return storage, shape, stride, offset
    own = Tensor._from_array(backend.of_array(data).to_host(data).copy())._storage
    return own, shape, contiguous_strides(shape), 0


def _base_value(x: int | str) -> int | str:
    return int(x) if isinstance(x, int) else str(x)


def _type_name(x: Any) -> str:
    cls = type(x)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def _hint(x: Any) -> str:
    """What to save instead of ``x``, which a minitorch file can't hold."""
    if isinstance(x, np.ndarray):
        return (
            "save minitorch.from_numpy(array) (a tensor) instead, or array.tolist(); "
            + _SAVE_INSTEAD
        )
    if isinstance(x, np.generic):
        return "save value.item() (a Python number) instead; " + _SAVE_INSTEAD
    if hasattr(x, "state_dict"):
        return (
            "save its .state_dict() instead (torch.save of a whole model or optimizer pickles "
            "it; rebuild it in code and call load_state_dict on what minitorch.load returns); "
            + _SAVE_INSTEAD
        )
    if isinstance(x, (dtype, device)):
        return f"save str({x!r}) instead; " + _SAVE_INSTEAD
    if isinstance(x, (set, frozenset)):
        return "save sorted(values) or list(values) instead; " + _SAVE_INSTEAD
    if isinstance(x, (bytes, bytearray)):
        return (
            "save a str (bytes.decode()) or a uint8 tensor of the bytes instead; " + _SAVE_INSTEAD
        )
    if isinstance(x, complex):
        return "save (z.real, z.imag) instead; " + _SAVE_INSTEAD
    if callable(x):
        return (
            "code (functions, classes, modules) is never saved, only values: save the values it "
            "needs instead and rebuild the code when loading; " + _SAVE_INSTEAD
        )
    return _SAVE_INSTEAD


def _host_array(array: Any) -> np.ndarray:
    """A backend array as a C-contiguous little-endian numpy array on the host."""
    array = backend.of_array(array).to_host(array)
    return array.astype(array.dtype.newbyteorder("<"), order="C", copy=False)


def _align(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def _write(out: IO[bytes], header: bytes, arrays: list[tuple[int, np.ndarray]]) -> None:
    """Stream the file to ``out``, hashing as it goes."""
    digest = hashlib.sha256()

    def put(chunk: bytes | np.ndarray) -> None:
        digest.update(chunk)
        out.write(chunk)

    head = _PREAMBLE.pack(MAGIC, VERSION, len(header)) + header
    put(head)
    put(hashlib.sha256(head).digest())
    written, start = len(head) + _DIGEST, _align(len(head) + _DIGEST)
    for offset, array in arrays:
        put(bytes(start + offset - written))
        put(array.reshape(-1).view(np.uint8))
        written = start + offset + array.nbytes
    put(bytes(max(start - written, 0)))  # no tensors: pad up to the (empty) data section
    out.write(digest.digest())


def _atomic_write(path: str, write: Callable[[IO[bytes]], None]) -> None:
    """Write a temporary file next to ``path``, fsync it, then rename it onto ``path``."""
    directory = os.path.dirname(os.path.abspath(path))
    tmp, fd = _create_temp(directory, os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_directory(directory)


def _create_temp(directory: str, name: str) -> tuple[str, int]:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = os.path.join(directory, f".{name}.{secrets.token_hex(6)}.tmp")
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue


def _fsync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX; not possible on Windows)."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# --- load -------------------------------------------------------------------------------
def load(
    f: PathOrFile,
    map_location: str | device | dict | Callable | None = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
) -> Any:
    """Read an object written by ``save``; tensors go to ``map_location`` (default cpu):
    a device, a dict from location to location, or ``fn(tensor, location)`` returning
    the tensor to use (see the module docstring)."""
    if weights_only is not None and not isinstance(weights_only, bool):
        raise TypeError(f"load: weights_only must be a bool or None, got {weights_only!r}")
    if mmap:
        raise NotImplementedError(
            "load: mmap=True is not supported (the file is read whole and checked); leave mmap "
            "unset instead"
        )
    relocate = None
    if isinstance(map_location, dict):
        map_location = map_location.get("cpu", "cpu")  # (every tensor comes from "cpu")
    elif callable(map_location) and not isinstance(map_location, (str, device)):
        relocate, map_location = map_location, None
    elif map_location is not None and not isinstance(map_location, (str, device)):
        raise TypeError(
            f"load: map_location must be None, a device, a string like 'cpu' or 'cuda:0', a "
            f"dict or a function, got {type(map_location).__name__}"
        )
    target = as_device(map_location, "load")
    name, data = _read(f)
    if relocate is not None:
        return _relocate(_load(name, data, target), relocate)
    return _load(name, data, target)


def _relocate(obj: Any, fn: Callable) -> Any:
    """Pass each tensor of a loaded object through ``fn(tensor, "cpu")``."""
    if isinstance(obj, Tensor):
        out = fn(obj, "cpu")
        if not isinstance(out, Tensor):
            raise TypeError(
                f"load: map_location returned a {type(out).__name__}, not a Tensor (it is "
                "called as map_location(tensor, location))"
            )
        return out
    if isinstance(obj, dict):
        return {k: _relocate(v, fn) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_relocate(v, fn) for v in obj)
    return obj


def _load(name: str, data: bytes, target: device) -> Any:
    try:
        header, data_start = _check_file(name, data)
        decoder = _Decoder(name, data, data_start, target, header.get("storages"))
        return decoder.node(header["object"], "obj")
    except RecursionError:
        raise SerializationError(f"load: {name!r}: the header is nested too deeply") from None


def _read(f: PathOrFile) -> tuple[str, bytes]:
    if isinstance(f, io.TextIOBase):
        raise TypeError("load: expected a path or a binary file object (opened with 'rb')")
    if hasattr(f, "read"):
        data = f.read()
        if not isinstance(data, (bytes, bytearray)):
            raise TypeError("load: expected a path or a binary file object (opened with 'rb')")
        return str(getattr(f, "name", "<file object>")), bytes(data)
    if not isinstance(f, (str, bytes, os.PathLike)):
        raise TypeError(
            f"load: f must be a path or a binary file object with read(), but got "
            f"{type(f).__name__} {f!r:.40}"
        )
    path = os.fspath(f)
    try:
        with open(path, "rb") as fh:
            return str(path), fh.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"load: no such file: {path!r}") from None
    except IsADirectoryError:
        raise IsADirectoryError(f"load: {path!r} is a directory, not a saved file") from None


def _check_file(name: str, data: bytes) -> tuple[dict, int]:
    """Check magic, version, sizes and checksums; return the header and data offset."""

    def fail(problem: str) -> SerializationError:
        return SerializationError(f"load: {name!r} {problem}")

    size = len(data)
    if size == 0:
        raise fail("is empty (0 bytes), so it is not a minitorch file")
    if data[: len(MAGIC)] != MAGIC:
        if MAGIC.startswith(data):
            raise fail(f"is truncated: it ends after {size} bytes, inside the magic bytes")
        raise fail(
            f"is not a minitorch file (it starts with {data[:8]!r}{_foreign_kind(data)}, not "
            f"{MAGIC!r}); {_NO_PICKLE}"
        )
    if size < _PREAMBLE.size:
        raise fail(f"is truncated: it ends after {size} bytes, inside its 22-byte preamble")
    _, version, header_len = _PREAMBLE.unpack_from(data)
    if version not in (1, VERSION):
        newer = " (written by a newer minitorch; upgrade to read it)" if version > VERSION else ""
        raise fail(
            f"has unsupported format version {version}{newer}; this minitorch reads {VERSION}"
        )
    header_end = _PREAMBLE.size + header_len
    if header_end + _DIGEST > size:
        raise fail(
            f"is truncated (or its header-length field is corrupt): its {header_len}-byte header "
            f"and checksum should end at byte {header_end + _DIGEST}, but the file has {size} bytes"
        )
    if hashlib.sha256(data[:header_end]).digest() != data[header_end : header_end + _DIGEST]:
        raise fail("is corrupt: the checksum of its header does not match the header")
    header = _parse_header(data[_PREAMBLE.size : header_end], fail, version)
    data_start = _align(header_end + _DIGEST)
    end = data_start + header["data_nbytes"] + _DIGEST
    if size < end:
        raise fail(f"is truncated: its header says it is {end} bytes long, but it has {size}")
    if size > end:
        raise fail(f"is corrupt: it has {size - end} unexpected bytes after its end (byte {end})")
    if hashlib.sha256(memoryview(data)[: end - _DIGEST]).digest() != data[end - _DIGEST :]:
        raise fail(
            "is corrupt: the checksum of its contents does not match (bytes were changed after "
            "it was written)"
        )
    return header, data_start


def _foreign_kind(data: bytes) -> str:
    if data[:1] == b"\x80":
        return ", like a pickle"
    if data[:4] == b"PK\x03\x04":
        return ", like the zip archives torch.save writes"
    return ""


def _parse_header(raw: bytes, fail: Callable[[str], SerializationError], version: int) -> dict:
    def no_constants(token: str) -> Any:
        raise ValueError(f"{token} is not valid JSON")

    try:
        header = json.loads(raw.decode("utf-8"), parse_constant=no_constants)
    except (UnicodeDecodeError, ValueError) as err:
        raise fail(f"has a header that is not valid UTF-8 JSON: {err}") from None
    keys = {"data_nbytes", "object"} | ({"storages"} if version > 1 else set())
    if not isinstance(header, dict) or set(header) != keys:
        raise fail(
            f"has a malformed header: expected an object with keys {', '.join(sorted(keys))}"
        )
    if version > 1 and not isinstance(header["storages"], list):
        raise fail("has a malformed header: storages must be a list")
    if not _is_count(header["data_nbytes"]):
        raise fail(f"has a malformed header: data_nbytes is {header['data_nbytes']!r}")
    return header


def _is_count(x: Any) -> bool:
    """A non-negative JSON integer (JSON true/false are not counts)."""
    return type(x) is int and x >= 0


class _Decoder:
    """Turns header nodes back into objects, checking each one against the format."""

    def __init__(
        self, name: str, data: bytes, data_start: int, target: device, storages: list | None
    ) -> None:
        self.name, self.data, self.data_start, self.target = name, data, data_start, target
        self.data_nbytes = len(data) - data_start - _DIGEST
        self.storages = storages  # (None: a version 1 file)
        self._storages: dict[int, Storage] = {}
        self._tensors: dict[int, Tensor] = {}

    def fail(self, path: str, problem: str) -> SerializationError:
        return SerializationError(
            f"load: {self.name!r} has a malformed header at {path}: {problem}"
        )

    def node(self, x: Any, path: str) -> Any:
        if x is None or type(x) in (bool, int, float, str):
            return x
        if isinstance(x, list):
            return [self.node(v, f"{path}[{i}]") for i, v in enumerate(x)]
        if not isinstance(x, dict) or "type" not in x:
            raise self.fail(path, f"expected a value or a typed entry, got {x!r:.60}")
        kind = x["type"]
        if kind == "tensor":
            return self.tensor(x, path)
        if kind == "float" and set(x) == {"type", "value"} and x["value"] in ("nan", "inf", "-inf"):
            return float(x["value"])
        if (
            kind in ("tuple", "dict")
            and set(x) == {"type", "items"}
            and isinstance(x["items"], list)
        ):
            if kind == "tuple":
                return tuple(self.node(v, f"{path}[{i}]") for i, v in enumerate(x["items"]))
            return self.dict(x["items"], path)
        raise self.fail(path, f"unknown or incomplete entry {x!r:.80}")

    def dict(self, items: list, path: str) -> dict:
        out = {}
        for item in items:
            if not (isinstance(item, list) and len(item) == 2):
                raise self.fail(path, f"a dict item must be a [key, value] pair, got {item!r:.60}")
            key = self.node(item[0], path)
            if not isinstance(key, _KEY_TYPES):
                raise self.fail(
                    path, f"a dict key must be a str, number, bool or null: {key!r:.60}"
                )
            out[key] = self.node(item[1], f"{path}[{key!r}]")
        return out

    def tensor(self, x: dict, path: str) -> Tensor:
        if self.storages is not None:
            return self.view(x, path)
        if set(x) != {"type", "dtype", "shape", "offset", "nbytes"}:
            raise self.fail(
                path, f"a tensor entry needs dtype, shape, offset and nbytes: {x!r:.80}"
            )
        name, shape, offset, nbytes = x["dtype"], x["shape"], x["offset"], x["nbytes"]
        if name not in _DTYPES:
            raise self.fail(path, f"unknown dtype {name!r:.40}; known: {', '.join(_DTYPES)}")
        if not (isinstance(shape, list) and all(_is_count(n) for n in shape)):
            raise self.fail(
                path, f"shape must be a list of non-negative integers, got {shape!r:.60}"
            )
        if not (_is_count(offset) and _is_count(nbytes)):
            raise self.fail(path, f"offset and nbytes must be counts, got {offset!r}, {nbytes!r}")
        np_dtype = _DTYPES[name].np
        if nbytes != math.prod(shape) * np_dtype.itemsize:
            raise self.fail(
                path,
                f"nbytes {nbytes} does not match shape {tuple(shape)} of {name} "
                f"({math.prod(shape) * np_dtype.itemsize} bytes)",
            )
        if offset + nbytes > self.data_nbytes:
            raise self.fail(
                path,
                f"bytes [{offset}, {offset + nbytes}) are outside the {self.data_nbytes}-byte data",
            )
        start = self.data_start + offset
        raw = np.frombuffer(
            memoryview(self.data)[start : start + nbytes], dtype=np_dtype.newbyteorder("<")
        )
        try:
            array = raw.astype(np_dtype).reshape(shape)  # a writable copy in native byte order
        except ValueError as err:
            raise self.fail(path, f"bad shape {tuple(shape)}: {err}") from None
        t = from_numpy(array)
        return t if self.target.type == "cpu" else t.to(self.target)

    def view(self, x: dict, path: str) -> Tensor:
        """A version 2 tensor entry: a view of a storage, the same object for the same id."""
        keys = {"type", "id", "storage", "shape", "stride", "storage_offset"}
        if set(x) != keys | {"requires_grad", "parameter"}:
            raise self.fail(
                path,
                "a tensor entry needs id, storage, shape, stride, storage_offset, "
                f"requires_grad and parameter: {x!r:.80}",
            )
        if not _is_count(x["id"]):
            raise self.fail(path, f"id must be a count, got {x['id']!r:.40}")
        if x["id"] in self._tensors:
            return self._tensors[x["id"]]
        shape, stride, offset = x["shape"], x["stride"], x["storage_offset"]
        for what, sizes in (("shape", shape), ("stride", stride)):
            if not (isinstance(sizes, list) and all(_is_count(n) for n in sizes)):
                raise self.fail(
                    path, f"{what} must be a list of non-negative integers, got {sizes!r:.60}"
                )
        if len(stride) != len(shape) or not _is_count(offset):
            raise self.fail(path, f"stride {stride!r:.40} or storage_offset {offset!r:.20} is bad")
        if not all(type(x[k]) is bool for k in ("requires_grad", "parameter")):
            raise self.fail(path, "requires_grad and parameter must be true or false")
        storage = self.storage(x["storage"], path)
        last = offset + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))
        if math.prod(shape) and last >= len(storage):
            raise self.fail(
                path,
                f"shape {tuple(shape)} with stride {tuple(stride)} from offset {offset} reads "
                f"past the end of its {len(storage)}-element storage",
            )
        if x["requires_grad"] and not storage.dtype.is_floating_point:
            raise self.fail(path, f"a {storage.dtype.name} tensor can't require grad")
        t = Tensor._alias(storage, strided_view(storage, tuple(shape), tuple(stride), offset))
        t._strides, t._offset = tuple(stride), offset
        if x["parameter"]:
            from .nn.parameter import Parameter

            t = Parameter(t, requires_grad=x["requires_grad"])
        elif x["requires_grad"]:
            t.requires_grad = True
        self._tensors[x["id"]] = t
        return t

    def storage(self, k: Any, path: str) -> Storage:
        """Storage number ``k`` of the header, read once and shared by its views."""
        if not (_is_count(k) and k < len(self.storages)):
            raise self.fail(path, f"storage {k!r:.20} is not one of the file's storages")
        if k not in self._storages:
            entry = self.storages[k]
            where = f"storages[{k}]"
            if not (isinstance(entry, dict) and set(entry) == {"dtype", "offset", "nbytes"}):
                raise self.fail(where, f"a storage needs dtype, offset and nbytes: {entry!r:.80}")
            name, offset, nbytes = entry["dtype"], entry["offset"], entry["nbytes"]
            if name not in _DTYPES:
                raise self.fail(where, f"unknown dtype {name!r:.40}; known: {', '.join(_DTYPES)}")
            if not (_is_count(offset) and _is_count(nbytes)):
                raise self.fail(where, f"offset and nbytes must be counts: {offset!r}, {nbytes!r}")
            np_dtype = _DTYPES[name].np
            if nbytes % np_dtype.itemsize or offset + nbytes > self.data_nbytes:
                raise self.fail(
                    where,
                    f"bytes [{offset}, {offset + nbytes}) are not whole {name} elements inside "
                    f"the {self.data_nbytes}-byte data",
                )
            start = self.data_start + offset
            raw = np.frombuffer(
                memoryview(self.data)[start : start + nbytes], dtype=np_dtype.newbyteorder("<")
            )
            array = raw.astype(np_dtype)  # a writable copy in native byte order
            if self.target.type != "cpu":
                array = backend.get(self.target).from_host(array, self.target, np_dtype)
            self._storages[k] = Storage(array)
        return self._storages[k]
