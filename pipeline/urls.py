"""URLs of files and folders in object stores (``s3://``, ``gs://``, ``az://``/``abfs://``,
``memory://``, ``file://``): which are accepted, and the fsspec file system for each. Kept below
every stage (only :mod:`pipeline.errors` under it) so that config, ingest and the store all
check a URL the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pipeline import settings
from pipeline.errors import ConfigError, RunIOError

# scheme -> (the package that provides it, fsspec's protocol name)
SCHEMES: dict[str, tuple[str | None, str]] = {
    "s3": ("s3fs", "s3"),
    "s3a": ("s3fs", "s3"),
    "gs": ("gcsfs", "gcs"),
    "gcs": ("gcsfs", "gcs"),
    "az": ("adlfs", "az"),
    "abfs": ("adlfs", "abfs"),
    "abfss": ("adlfs", "abfs"),
    "memory": (None, "memory"),
}
EXTRA = "cloud"


def is_url(spec: str | os.PathLike[str]) -> bool:
    return isinstance(spec, str) and "://" in spec


def check_url(spec: str, what: str = "--out") -> str:
    """``spec`` if it is a URL this program can write to; a one-line ConfigError (exit 2)
    otherwise: an unknown scheme, or credentials in the URL (never echoed)."""
    parts = urlsplit(spec)
    scheme = parts.scheme.lower()
    if "@" in parts.netloc or parts.password is not None or _USERINFO.match(spec):
        raise ConfigError(
            f"{what}: a URL with credentials in it is refused ({scheme}://<credentials>@...); "
            "give credentials through the environment, a profile or a role instead"
        )
    if parts.query or parts.fragment:
        raise ConfigError(f"{what}: {scheme}:// URL with a query or fragment is not supported")
    if scheme != "file" and scheme not in SCHEMES:
        known = ", ".join(f"{s}://" for s in ("s3", "gs", "az", "abfs", "memory", "file"))
        raise ConfigError(f"{what}: unsupported URL scheme {scheme}:// (supported: {known}, or a plain path)")
    if scheme != "file" and not (parts.netloc or parts.path.strip("/")):
        raise ConfigError(f"{what}: {spec!r} names no bucket or folder")
    return spec


def filesystem(scheme: str) -> Any:
    """The fsspec file system for ``scheme`` (credentials from its standard chain: environment,
    profile, role); a missing package is a one-line ConfigError naming the extra."""
    package, protocol = SCHEMES[scheme]
    try:
        import fsspec

        cls = fsspec.get_filesystem_class(protocol)
    except ImportError:
        raise ConfigError(
            f"{scheme}:// needs the {package} package: pip install 'boggle-pipeline[{EXTRA}]'"
        ) from None
    options: dict[str, Any] = {}
    if protocol != "memory":
        # listings are read back right after writes (committed parts, lease generations)
        options["use_listings_cache"] = False
    if protocol == "s3":
        # bounded (settings.py): an unreachable endpoint is one line (exit 5) within seconds,
        # not minutes of silent retries
        timeout, retries = settings.get().fs_connect_timeout, settings.get().fs_retries
        options["config_kwargs"] = {
            "connect_timeout": timeout,
            "read_timeout": max(timeout, 60.0),
            "retries": {"max_attempts": retries, "mode": "standard"},
        }
    fs = cls(**options)
    if protocol == "s3":
        fs.retries = retries  # s3fs's own retry loop, on top of botocore's
    return fs


# userinfo after a scheme's "//" (collapsed to "/" by a path): "user:secret@" (the secret may
# hold "/", as AWS secret keys do) or "token@"
_USERINFO = re.compile(r"""([A-Za-z][A-Za-z0-9+.-]*:/+)([^\s/@'"<>]*:[^\s@'"<>]*|[^\s/@:'"<>]+)@""")
# query parameters that carry a credential: presigned S3 and GCS URLs, Azure SAS, tokens
_SECRET_PARAMS = re.compile(
    r"""([?&;](?:x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|"""
    r"""x-goog-credential|sig|signature|token|access_token|password|passwd|secret|"""
    r"""client_secret|api_key|apikey)=)[^&;#\s'"]*""",
    re.IGNORECASE,
)
REDACTED = "<credentials>"


def redact(text: str) -> str:
    """``text`` (a URL, a path, a message or a record's field) with every credential a URL in it
    may carry replaced by ``<credentials>``: the userinfo of ``s3://KEY:SECRET@bucket/...`` and
    credential query parameters (``X-Amz-Signature=``, ``X-Amz-Credential=``, ``sig=``,
    ``token=``, ``password=``, ``secret=``...). The one redaction every message, note, log line
    and JSON record goes through (:mod:`pipeline.cli._outcome`).

    >>> redact("error: s3://AKIA:s/cr+t@bucket/runs/a?X-Amz-Signature=abc&x=1: not a run")
    'error: s3://<credentials>@bucket/runs/a?X-Amz-Signature=<credentials>&x=1: not a run'
    """
    if "@" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    return _SECRET_PARAMS.sub(lambda m: f"{m.group(1)}{REDACTED}", text)


def resolve_out(out: str, key: str, where: str | None) -> str:
    """An output folder as recorded: a local path made absolute, a ``file://`` URL as that
    path, any other URL kept as it is once checked (an unknown scheme or credentials in it are
    a ConfigError, never a local folder named after the URL)."""
    if is_url(out):
        try:
            check_url(out, key)
        except ConfigError as exc:
            raise ConfigError(exc.message, source=where) from None
        if not out.lower().startswith("file://"):
            return out.rstrip("/")
        out = out[len("file://") :]
    return str(Path(out).expanduser().absolute())


def download(url: str, dest: Path) -> None:
    """Copy the object ``url`` to the local file ``dest``: a missing object is a BoggleError
    (exit 2), any other storage failure a RunIOError (exit 5), each one line."""
    parts = urlsplit(check_url(url, "input"))
    scheme = parts.scheme.lower()
    if scheme == "file":
        import shutil

        shutil.copyfile(parts.path, dest)
        return
    key = f"{parts.netloc}{parts.path}"
    fs = filesystem(scheme)
    with _reading(fs, parts.netloc, url, "input file not found"):
        fs.get_file(key, str(dest))


@contextmanager
def _reading(fs: Any, bucket: str, url: str, missing: str) -> Iterator[None]:
    """Storage failures of reading ``url`` as one line each: a missing object (or bucket) a
    BoggleError saying ``missing`` (exit 2), anything else a RunIOError (exit 5)."""
    from pipeline.errors import BoggleError

    try:
        yield
    except FileNotFoundError:
        _check_bucket(fs, bucket, url)
        raise BoggleError(missing, source=url) from None
    except BoggleError:
        raise
    except PermissionError:
        raise RunIOError("permission denied", source=url) from None
    except Exception as exc:
        raise RunIOError(f"cannot read it: {reason(exc)}", source=url) from None


def local_path(url: str) -> str | None:
    """The local path a ``file://`` URL names, or None for any other URL or a path."""
    parts = urlsplit(url)
    return parts.path if is_url(url) and parts.scheme.lower() == "file" else None


def read_url_bytes(url: str, cap: int, what: str = "input") -> bytes:
    """The bytes of the object ``url`` (a small input: a dice file), refused past ``cap`` bytes
    before it is read: a missing object or one too large is a BoggleError (exit 2), any other
    storage failure a RunIOError (exit 5), each one line. A ``file://`` URL is a local file: the
    caller reads its path (:func:`local_path`) as it reads any local file (never a FIFO or a
    device), so it is refused here."""
    from pipeline.errors import BoggleError

    parts = urlsplit(check_url(url, what))
    scheme = parts.scheme.lower()
    if scheme == "file":
        raise BoggleError(f"{what}: a file:// URL is read as a local path", source=url)
    key = f"{parts.netloc}{parts.path}"
    fs = filesystem(scheme)
    with _reading(fs, parts.netloc, url, f"{what} not found"):
        size = int(fs.info(key).get("size") or 0)
        if size > cap:
            raise BoggleError(f"{what} is {size:,} bytes, larger than {cap:,}; refused", source=url)
        data = bytes(fs.cat_file(key, start=0, end=cap + 1))
    if len(data) > cap:
        raise BoggleError(f"{what} is larger than {cap:,} bytes; refused", source=url)
    return data


def _check_bucket(fs: Any, bucket: str, url: str) -> None:
    """RunIOError (exit 5) when ``bucket`` is missing or cannot be reached: a missing object in
    a bucket that is there is the user's (exit 2), a missing bucket is the storage's."""
    if not bucket:
        return
    try:
        fs.info(bucket)
    except FileNotFoundError:
        raise RunIOError("cannot reach the bucket: not found", source=url) from None
    except Exception as exc:
        raise RunIOError(f"cannot reach the bucket: {reason(exc)}", source=url) from None


def reason(exc: BaseException) -> str:
    """An exception as one short line, without anything that could carry a secret (only its
    type and first line; botocore's messages name the operation and the endpoint)."""
    text = (str(exc).splitlines() or [""])[0][:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
