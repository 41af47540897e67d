"""A part's statistics as bytes (what the run store keeps beside the part) and back.

The file is a NumPy ``.npz`` (a zip of ``.npy`` arrays, read without pickle) whose ``meta``
member holds the small JSON part (sources, faces, the spec, the top boards). Reading checks
every array's dtype and shape against the meta, so a file that decodes is one the analysis can
merge; the store has already checked its checksum against the sealed manifest.
"""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import numpy as np

from pipeline.errors import DamagedRunError
from pipeline.io import load_npz
from pipeline.stats._part import (
    LEXICON_VOCAB,
    LOCAL_VOCAB,
    STATS_VERSION,
    VALUE_COLUMNS,
    PartStats,
    StatsSpec,
)

_OPTIONAL = ("xtx", "xty", "pos_xtx", "pos_xty", "die_n", "die_s", "die_bad", "word_counts")
_ALWAYS = (
    "length_words",
    "length_points",
    "face_n",
    "face_s",
    "face_q",
    "factor_has",
    "factor_bad",
    "longest",
)


def to_bytes(ps: PartStats) -> bytes:
    """The statistics as one ``.npz`` file's bytes (deterministic for the same statistics)."""
    meta = {
        "version": STATS_VERSION,
        "tag": ps.tag,
        "chunk": ps.chunk,
        "boards": ps.boards,
        "spec": ps.spec.to_dict(),
        "sources": ps.sources,
        "faces": ps.faces,
        "shape": list(ps.shape) if ps.shape else None,
        "bins": ps.bins,
        "vocab": ps.vocab,
        "words": ps.words,
        "bad": ps.bad,
        "factors": ps.factors,
        "dice": [list(d) for d in ps.dice] if ps.dice is not None else None,
        "top": ps.top,
    }
    arrays: dict[str, np.ndarray] = {
        "meta": np.frombuffer(json.dumps(meta, ensure_ascii=False, sort_keys=True).encode(), np.uint8)
    }
    for c in VALUE_COLUMNS:
        arrays[f"values_{c}"] = _narrow(np.ascontiguousarray(ps.values[c], dtype=np.int64))
    for name in (*_ALWAYS, *_OPTIONAL):
        value = getattr(ps, name)
        if value is not None:
            arrays[name] = _narrow(np.ascontiguousarray(value, dtype=np.int64))
    buf = io.BytesIO()
    # a fixed timestamp on every member, so the same statistics give the same bytes
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            member = io.BytesIO()
            np.lib.format.write_array(member, arrays[name], allow_pickle=False)
            zf.writestr(info, member.getvalue())
    return buf.getvalue()


_NARROW = (np.int8, np.int16, np.int32)


def _narrow(a: np.ndarray) -> np.ndarray:
    """``a`` in the smallest signed integer type that holds its values: a part's word counts
    (three rows of int64 for some 40,000 words) take half the bytes and inflate in 60% of the
    time. Read back as int64 (:func:`_int_array`)."""
    if not a.size:
        return a
    lo, hi = int(a.min()), int(a.max())
    for t in _NARROW:
        info = np.iinfo(t)
        if info.min <= lo and hi <= info.max:
            return a.astype(t)
    return a


class _Bad(Exception):
    pass


def _need(cond: bool, what: str) -> None:
    if not cond:
        raise _Bad(what)


def from_bytes(data: bytes, where: str = "statistics") -> PartStats:
    """The statistics of :func:`to_bytes`; a DamagedRunError naming ``where`` when the bytes
    are not such a file or do not hang together."""
    try:
        return _decode(load_npz(io.BytesIO(data)))
    except _Bad as exc:
        raise DamagedRunError(f"{where}: damaged statistics ({exc})") from None
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, EOFError) as exc:
        text = str(exc).splitlines()[0][:80] if str(exc) else type(exc).__name__
        raise DamagedRunError(f"{where}: unreadable statistics ({text})") from None


def _int_array(arrays: dict[str, np.ndarray], name: str, shape: tuple[int | None, ...]) -> np.ndarray:
    a = arrays.get(name)
    _need(a is not None, f"no {name}")
    assert a is not None
    # int64, or narrower where the values fit (written so since; read back as int64)
    _need(a.dtype in (np.int64, *_NARROW) and a.ndim == len(shape), f"{name} has the wrong type")
    for got, want in zip(a.shape, shape, strict=True):
        _need(want is None or got == want, f"{name} has the wrong shape")
    return a.astype(np.int64, copy=False)


def _strings(value: Any, what: str) -> list[str]:
    _need(
        isinstance(value, list) and all(isinstance(x, str) for x in value), f"{what} is not a list of strings"
    )
    return list(value)


def _decode(arrays: dict[str, np.ndarray]) -> PartStats:
    raw = arrays.get("meta")
    _need(raw is not None and raw.dtype == np.uint8 and raw.ndim == 1, "no meta")
    assert raw is not None
    meta = json.loads(raw.tobytes().decode("utf-8"))
    _need(isinstance(meta, dict), "meta is not an object")
    _need(meta.get("version") == STATS_VERSION, f"version {meta.get('version')!r}, not {STATS_VERSION}")
    sources = _strings(meta.get("sources"), "sources")
    faces = _strings(meta.get("faces"), "faces")
    bins = _strings(meta.get("bins"), "bins")
    factors = _strings(meta.get("factors"), "factors")
    s, k, b, f = max(1, len(sources)), len(faces), len(bins), len(factors)
    vocab = meta.get("vocab")
    _need(vocab in (LEXICON_VOCAB, LOCAL_VOCAB), "unknown vocabulary")
    words = _strings(meta.get("words"), "words") if vocab == LOCAL_VOCAB else None
    shape = meta.get("shape")
    _need(
        shape is None
        or (isinstance(shape, list) and len(shape) == 2 and all(type(x) is int and x > 0 for x in shape)),
        "bad shape",
    )
    for key in ("chunk", "boards", "bad"):
        _need(type(meta.get(key)) is int and meta[key] >= 0, f"bad {key}")
    _need(isinstance(meta.get("tag"), str), "no tag")
    spec_d = meta.get("spec")
    _need(isinstance(spec_d, dict) and type(spec_d.get("top")) is int, "bad spec")
    for key in ("bad_words", "bad_score"):
        _need(spec_d.get(key) is None or type(spec_d[key]) is int, "bad spec")
    spec = StatsSpec.from_dict(spec_d)
    top = meta.get("top")
    _need(isinstance(top, list) and all(isinstance(r, dict) for r in top), "bad top boards")
    dice_raw = meta.get("dice")
    dice = None
    if dice_raw is not None:
        _need(isinstance(dice_raw, list) and len(dice_raw) > 0, "bad dice")
        dice = tuple(tuple(_strings(d, "a die")) for d in dice_raw)
    values = {c: _int_array(arrays, f"values_{c}", (3, None)) for c in VALUE_COLUMNS}
    grid = shape is not None
    got: dict[str, Any] = {
        "length_words": _int_array(arrays, "length_words", (s, b)),
        "length_points": _int_array(arrays, "length_points", (s, b)),
        "face_n": _int_array(arrays, "face_n", (s, k)),
        "face_s": _int_array(arrays, "face_s", (s, k)),
        "face_q": _int_array(arrays, "face_q", (s, k)),
        "factor_has": _int_array(arrays, "factor_has", (f,)),
        "factor_bad": _int_array(arrays, "factor_bad", (f,)),
        "longest": _int_array(arrays, "longest", (3, None)),
        "xtx": _int_array(arrays, "xtx", (s, k, k)) if grid else None,
        "xty": _int_array(arrays, "xty", (s, k)) if grid else None,
        "pos_xtx": _int_array(arrays, "pos_xtx", (3 * k, 3 * k)) if grid else None,
        "pos_xty": _int_array(arrays, "pos_xty", (3 * k,)) if grid else None,
        "word_counts": _int_array(arrays, "word_counts", (3, None)) if "word_counts" in arrays else None,
    }
    if dice is not None:
        m = max(len(d) for d in dice)
        for name in ("die_n", "die_s", "die_bad"):
            got[name] = _int_array(arrays, name, (len(dice), m))
    else:
        got.update(die_n=None, die_s=None, die_bad=None)
    size = len(words) if words is not None else None
    for name in ("longest", "word_counts"):
        a = got[name]
        if a is None or not a.shape[1]:
            continue
        _need(int(a[0].min()) >= 0 and int(a[0].max()) < s, f"{name} names an unknown source")
        _need(
            int(a[1].min()) >= 0 and (size is None or int(a[1].max()) < size), f"{name} names an unknown word"
        )
    for c, a in values.items():
        _need(
            not a.shape[1] or (int(a[0].min()) >= 0 and int(a[0].max()) < s),
            f"values of {c} name an unknown source",
        )
    return PartStats(
        tag=meta["tag"],
        chunk=meta["chunk"],
        boards=meta["boards"],
        spec=spec,
        sources=sources,
        faces=faces,
        shape=(shape[0], shape[1]) if shape else None,
        bins=bins,
        vocab=vocab,
        words=words,
        values=values,
        bad=meta["bad"],
        factors=factors,
        dice=dice,
        top=top,
        **got,
    )
