"""URLs of files and folders in object stores (``s3://``, ``gs://``, ``az://``/``abfs://``,
``memory://``, ``file://``): which are accepted, and the fsspec file system for each. Kept below
every stage (only :mod:`pipeline.errors` under it) so that config, ingest and the store all
check a URL the same way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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
# seconds to wait for a connection, and attempts per request: an unreachable endpoint is one
# line (exit 5) within seconds, not minutes of silent retries
CONNECT_TIMEOUT_ENV = "BOGGLE_FS_CONNECT_TIMEOUT"
RETRIES_ENV = "BOGGLE_FS_RETRIES"


def is_url(spec: str | os.PathLike[str]) -> bool:
    return isinstance(spec, str) and "://" in spec


def check_url(spec: str, what: str = "--out") -> str:
    """``spec`` if it is a URL this program can write to; a one-line ConfigError (exit 2)
    otherwise: an unknown scheme, or credentials in the URL (never echoed)."""
    parts = urlsplit(spec)
    scheme = parts.scheme.lower()
    if "@" in parts.netloc or parts.password is not None:
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
        timeout = float(os.environ.get(CONNECT_TIMEOUT_ENV, "10"))
        retries = int(os.environ.get(RETRIES_ENV, "3"))
        options["config_kwargs"] = {
            "connect_timeout": timeout,
            "read_timeout": max(timeout, 60.0),
            "retries": {"max_attempts": retries, "mode": "standard"},
        }
    fs = cls(**options)
    if protocol == "s3":
        fs.retries = retries  # s3fs's own retry loop, on top of botocore's
    return fs


def redact(spec: str) -> str:
    """``spec`` with any credentials in a URL's authority removed (for messages and records)."""
    if not is_url(spec):
        return spec
    parts = urlsplit(spec)
    if "@" not in parts.netloc:
        return spec
    return parts._replace(netloc="<credentials>@" + parts.netloc.rsplit("@", 1)[1]).geturl()


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
    from pipeline.errors import BoggleError

    parts = urlsplit(check_url(url, "input"))
    scheme = parts.scheme.lower()
    if scheme == "file":
        import shutil

        shutil.copyfile(parts.path, dest)
        return
    key = f"{parts.netloc}{parts.path}"
    try:
        filesystem(scheme).get_file(key, str(dest))
    except FileNotFoundError:
        raise BoggleError("input file not found", source=url) from None
    except BoggleError:
        raise
    except PermissionError:
        raise RunIOError("permission denied", source=url) from None
    except Exception as exc:
        raise RunIOError(f"cannot read it: {reason(exc)}", source=url) from None


def reason(exc: BaseException) -> str:
    """An exception as one short line, without anything that could carry a secret (only its
    type and first line; botocore's messages name the operation and the endpoint)."""
    text = (str(exc).splitlines() or [""])[0][:160]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
