"""The environment is read in one place (pipeline/settings.py), once, and documented from there."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest

from pipeline import settings
from pipeline.errors import ConfigError
from pipeline.settings import Settings
from tests.conftest import REPO, one_error_line, run_boggle

PACKAGE = REPO / "pipeline"

# a read of the environment: os.environ, os.getenv (and putenv/unsetenv), or environ imported
ENV_READ = re.compile(r"\bos\.(environ|getenv|putenv|unsetenv)\b|\bfrom os import\b.*\b(environ|getenv)\b")
# what is allowed outside settings.py: the whole environment handed on to a child process
# (``{**os.environ, ...}``), marked so on its line, which reads no variable for this process
CHILD_ENV = re.compile(r"\*\*os\.environ\b.*# child-env")


def test_no_module_but_settings_reads_the_environment() -> None:
    readers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "settings.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ENV_READ.search(line) and not CHILD_ENV.search(line):
                readers.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not readers, "read the environment through pipeline.settings:\n" + "\n".join(readers)


def test_the_grep_sees_each_way_of_reading() -> None:
    for line in (
        'x = os.environ.get("BOGGLE_X")',
        'x = os.environ["HOME"]',
        'x = os.getenv("HOME")',
        "from os import environ",
        "env = {**os.environ}",  # handed on, but not marked as such
    ):
        assert ENV_READ.search(line) and not CHILD_ENV.search(line), line
    assert CHILD_ENV.search('env = {**os.environ, "A": "1"}  # child-env: why')


def test_every_variable_named_in_the_package_is_a_setting() -> None:
    """A ``BOGGLE_*`` name anywhere in the package's code or help texts is a field of Settings
    (so it is on the environment page)."""
    declared = {f.metadata["env"] for f in settings.FIELDS}
    named: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        named |= set(re.findall(r"\bBOGGLE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    assert named, "the scan found nothing: the pattern is wrong"
    assert named <= declared, sorted(named - declared)


def test_every_field_has_its_variable_type_default_and_doc() -> None:
    names = [f.metadata["env"] for f in settings.FIELDS]
    assert len(names) == len(set(names))
    for f in settings.FIELDS:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]+", f.metadata["env"]), f.name
        doc = f.metadata["doc"]
        assert doc.strip() and "\n" not in doc, f.name
        assert f.default is not dataclasses.MISSING, f.name
        assert f.type, f.name
    with pytest.raises(dataclasses.FrozenInstanceError):
        Settings().fs_retries = 5  # type: ignore[misc]


def test_defaults_match_the_modules_that_use_them() -> None:
    from pipeline import lexicon
    from pipeline.lexicon import trie

    env = Settings()
    assert env.lexicon_max_bytes == lexicon.DEFAULT_MAX_BYTES
    assert env.lexicon_max_lines == lexicon.DEFAULT_MAX_LINES
    assert env.lexicon_max_word == lexicon.DEFAULT_MAX_WORD
    assert env.lexicon_max_nodes == trie.DEFAULT_MAX_NODES
    assert settings.MAX_LINE_BYTES == lexicon.MAX_LINE_BYTES
    assert read_env() == Settings()  # an empty environment is every default
    # and the environment page shows them as the modules' own figures
    shown = {f.name: settings.shown_default(f) for f in settings.FIELDS}
    assert shown["lexicon_max_lines"] == f"{lexicon.DEFAULT_MAX_LINES:,}" == "10,000,000"
    assert shown["lexicon_max_bytes"] == f"{lexicon.DEFAULT_MAX_BYTES >> 20} MB"
    assert (shown["fs_connect_timeout"], shown["lease_ttl"], shown["main_pid"]) == ("10", "60", "unset")


def read_env(**variables: str) -> Settings:
    return settings.read(variables)


def test_values_are_parsed_to_their_types() -> None:
    env = read_env(
        BOGGLE_LEXICON_MAX_BYTES="512M",
        BOGGLE_LEXICON_MAX_LINES="20000000",
        BOGGLE_FS_CONNECT_TIMEOUT="2.5",
        BOGGLE_FS_RETRIES="7",
        BOGGLE_LEASE_TTL="5",
        BOGGLE_CACHE_DIR="/tmp/c",
        BOGGLE_TRACEBACK="1",
        BOGGLE_DICTIONARY="  tanglet:de  ",
    )
    assert env.lexicon_max_bytes == 512 * 1024 * 1024
    assert env.lexicon_max_lines == 20_000_000
    assert env.fs_connect_timeout == 2.5 and env.fs_retries == 7 and env.lease_ttl == 5.0
    assert env.cache_dir == Path("/tmp/c") and env.traceback is True
    assert env.dictionary == "tanglet:de"
    for size, expected in (("4096", 4096), ("1k", 1024), ("2 MiB", 2 << 20), ("1GB", 1 << 30)):
        assert read_env(BOGGLE_LEXICON_MAX_BYTES=size).lexicon_max_bytes == expected, size
    # empty counts as unset
    assert read_env(BOGGLE_FS_RETRIES="", TANGLET_DATA=" ", BOGGLE_TRACEBACK="") == Settings()


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("BOGGLE_FS_RETRIES", "abc", "BOGGLE_FS_RETRIES='abc': expected a whole number from 1 to 20"),
        ("BOGGLE_FS_RETRIES", "0", "BOGGLE_FS_RETRIES='0': expected a whole number from 1 to 20"),
        ("BOGGLE_FS_RETRIES", "2.5", "expected a whole number"),
        ("BOGGLE_FS_CONNECT_TIMEOUT", "nan", "BOGGLE_FS_CONNECT_TIMEOUT='nan': expected a number from 0.1"),
        ("BOGGLE_LEASE_TTL", "soon", "BOGGLE_LEASE_TTL='soon': expected a number"),
        ("BOGGLE_LEASE_RENEW", "-1", "BOGGLE_LEASE_RENEW='-1'"),
        ("BOGGLE_LEXICON_MAX_BYTES", "1.5G", "BOGGLE_LEXICON_MAX_BYTES='1.5G': expected a positive whole"),
        ("BOGGLE_LEXICON_MAX_WORD", "1025", "BOGGLE_LEXICON_MAX_WORD='1025': expected 1 to 1024"),
        ("BOGGLE_LEXICON_MAX_NODES", str(2**31), "expected 1 to 2147483647"),
        ("BOGGLE_LEXICON_MAX_LINES", "9" * 5000, "(5,000 characters)"),
        ("BOGGLE_FS_CONNECT_TIMEOUT", "9" * 5000, "(5,000 characters)"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(name: str, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        settings.read({name: text})
    line = caught.value.one_line()
    assert message in line and "\n" not in line and len(line) < 200, line


def test_the_environment_is_read_once(monkeypatch: pytest.MonkeyPatch) -> None:
    os.environ.pop("BOGGLE_FS_RETRIES", None)
    settings.reload()
    first = settings.get()
    assert first.fs_retries == 3
    os.environ["BOGGLE_FS_RETRIES"] = "9"  # behind the settings' back: not seen
    try:
        assert settings.get() is first
        settings.reload()
        assert settings.get().fs_retries == 9
    finally:
        del os.environ["BOGGLE_FS_RETRIES"]
        settings.reload()
    monkeypatch.setenv("BOGGLE_FS_RETRIES", "4")  # the tests' monkeypatch reloads for them
    assert settings.get().fs_retries == 4


def test_export_sets_the_variable_for_children_and_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BOGGLE_MAIN_PID", raising=False)
    monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL", raising=False)
    assert settings.get().main_pid is None
    settings.export("BOGGLE_MAIN_PID", "123")
    assert os.environ["BOGGLE_MAIN_PID"] == "123" and settings.get().main_pid == "123"
    settings.export("ARROW_DEFAULT_MEMORY_POOL", "system", replace=False)
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system"
    settings.export("ARROW_DEFAULT_MEMORY_POOL", "jemalloc", replace=False)  # the user's choice stays
    assert os.environ["ARROW_DEFAULT_MEMORY_POOL"] == "system"


def test_call_sites_read_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pipeline.analyze._display import compare_dirs_from_env
    from pipeline.lexicon import LexiconLimits, cache_dir, default_dictionary, tanglet_dir
    from pipeline.store.dataset import resolve_run_dir

    monkeypatch.setenv("BOGGLE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("BOGGLE_DICTIONARY", "tanglet:fr")
    monkeypatch.setenv("TANGLET_DATA", str(tmp_path / "t"))
    monkeypatch.setenv("BOGGLE_RUN_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("BOGGLE_COMPARE_DIRS", "a,b")
    monkeypatch.setenv("BOGGLE_LEXICON_MAX_WORD", "12")
    assert cache_dir() == tmp_path / "c"
    assert default_dictionary() == "tanglet:fr"
    assert tanglet_dir() == tmp_path / "t"
    assert resolve_run_dir() == tmp_path / "run"
    assert compare_dirs_from_env() == ["a", "b"]
    assert LexiconLimits.from_env().max_word == 12
    monkeypatch.delenv("BOGGLE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "boggle-pipeline"


def test_a_bad_variable_is_one_line_exit_2_from_the_cli() -> None:
    res = run_boggle("solve", "ABCDEFGHIJKLMNOP", env={"BOGGLE_LEXICON_MAX_WORD": "0"})
    assert res.returncode == 2, res.stderr
    one_error_line(res, "BOGGLE_LEXICON_MAX_WORD='0': expected 1 to 1024")


# ---------------------------------------------------------------- the environment page


def _hook():  # type: ignore[no-untyped-def]
    import importlib.util

    spec = importlib.util.spec_from_file_location("docs_reference_hook", REPO / "docs/_hooks/reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_environment_page_is_generated_from_the_settings() -> None:
    page = (REPO / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    assert "<!-- generated: environment -->" in page.splitlines()
    table = _hook().environment()
    rows = [ln for ln in table.splitlines() if ln.startswith("| `")]
    assert [re.match(r"\| `([^`]+)`", r).group(1) for r in rows] == [  # type: ignore[union-attr]
        f.metadata["env"] for f in settings.FIELDS
    ]
    for f, row in zip(settings.FIELDS, rows, strict=True):
        assert row.count(" | ") == 2, row  # three cells: no stray pipe
        assert row.endswith(f" {settings.shown_default(f)} |"), row
    # nothing hand-written repeats a generated row (it would drift)
    hand = page.replace("<!-- generated: environment -->", "")
    assert not any(f"| `{f.metadata['env']}` |" in hand for f in settings.FIELDS)
