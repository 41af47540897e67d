"""The guides run as written: every shell block of docs/quickstart.md and docs/guides/*.md, in
order, page by page, in a fresh copy of the checkout, with ``boggle`` on PATH.

How a page's blocks are read and run (the conventions are in docs/development.md, "Guides that
run"):

* ```` ```bash ````, ```` ```sh ```` and ```` ```console ```` fences are run; every other fence
  (``text``, ``python``, none) and indented blocks are not. In ``bash``/``sh`` every line that is
  not blank or a comment is a command; in ``console`` only the lines after a ``$ `` prompt are,
  and the other lines are output, shown for illustration and not compared. A line ending in
  ``\\`` continues on the next; a here-document (``<<EOF`` .. ``EOF``) belongs to its command.
* A command exits 0 unless its comment begins with ``exits N`` (``boggle run x # exits 4: ...``).
* An HTML comment right before a fence, ``<!-- guide-test: ... -->``, one directive a line,
  says how the test deviates from the text, so the deviation is visible in the source:
  ``skip: WHY (covered by tests/test_x.py)`` (the reason must name an existing file that covers
  the block), ``edit PATH "OLD" "NEW"`` (a file of the copy, from this block on: smaller counts
  in a config), ``replace "OLD" "NEW"`` (in this block's commands) and ``env NAME=VALUE`` (for
  this block's commands).
* Each command runs in its own ``bash`` that starts in the folder, and with the exported
  environment, the previous command left, so ``cd``, ``export`` and ``. .venv/bin/activate``
  carry over as in a terminal.

The copy holds the tracked (and untracked, not ignored) files of this checkout, plus a ``.venv``
as ``make setup`` leaves it, whose ``bin/`` runs this interpreter on the copy's own package
(``boggle`` is a shim for ``python -m pipeline.cli`` with ``PYTHONPATH`` set to the copy). The
numba cache of this checkout is copied beside the copy's modules, so a page does not recompile
the kernels (a user compiles them once).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGES = [REPO / "docs" / "quickstart.md", *sorted((REPO / "docs" / "guides").glob("*.md"))]
RUN_LANGS = {"bash", "sh", "console"}
#: the most one command may take (the slow ones are reduced by directives)
COMMAND_TIMEOUT = 180

FENCE = re.compile(r"^( *)(`{3,})\s*([\w-]*)\s*$")
DIRECTIVE = re.compile(r"<!--\s*guide-test:(.*?)-->", re.S)
EXPECT = re.compile(r"(?:^|\s)#\s*exits (\d+)\b", re.M)
HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


@dataclass
class Command:
    text: str
    line: int
    expect: int


@dataclass
class Block:
    page: str
    line: int
    lang: str
    commands: list[Command]
    skip: str | None = None
    edits: list[tuple[str, str, str]] = field(default_factory=list)
    replaces: list[tuple[str, str]] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)

    def where(self) -> str:
        return f"{self.page}:{self.line}"


def expected_exit(text: str) -> int:
    """The exit status a command's comment documents (``# exits N``), else 0."""
    match = EXPECT.search(text)
    return int(match.group(1)) if match else 0


def split_commands(lines: list[tuple[int, str]], lang: str) -> list[Command]:
    """The commands of a block's lines (number, text): prompts, continuations, here-documents."""
    commands: list[Command] = []
    i = 0
    while i < len(lines):
        number, line = lines[i]
        i += 1
        if lang == "console":
            if not line.startswith("$ "):
                continue  # output
            line = line[2:]
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [line]
        while parts[-1].rstrip().endswith("\\") and i < len(lines):
            nxt = lines[i][1]
            parts.append(nxt[2:] if lang == "console" and nxt.startswith("> ") else nxt)
            i += 1
        heredoc = HEREDOC.search(parts[0])
        if heredoc:
            end = heredoc.group(2)
            while i < len(lines):
                parts.append(lines[i][1])
                i += 1
                if parts[-1].strip() == end:
                    break
            else:
                raise AssertionError(f"line {number}: here-document without its {end} line")
        text = "\n".join(parts)
        commands.append(Command(text, number, expected_exit(parts[0] if heredoc else text)))
    return commands


def apply_directives(block: Block, body: str) -> None:
    """The directives of a ``<!-- guide-test: ... -->`` comment (one a line) onto ``block``."""
    for raw in body.strip().splitlines():
        line = raw.strip()
        if not line:
            continue
        word = line.split()[0]
        if line.startswith("skip:"):
            block.skip = line[len("skip:") :].strip()
        elif word == "edit":
            _, path, old, new = shlex.split(line)
            block.edits.append((path, old, new))
        elif word == "replace":
            _, old, new = shlex.split(line)
            block.replaces.append((old, new))
        elif word == "env":
            for assignment in shlex.split(line)[1:]:
                name, _, value = assignment.partition("=")
                block.env[name] = value
        else:
            raise AssertionError(f"{block.where()}: unknown guide-test directive {line!r}")


def parse_page(path: Path) -> list[Block]:
    """The runnable blocks of a page, with their directives."""
    rel = str(path.relative_to(REPO))
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    blocks: list[Block] = []
    attached = 0
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, ticks, lang, start = len(match.group(1)), match.group(2), match.group(3), i
        body: list[tuple[int, str]] = []
        i += 1
        while i < len(lines) and lines[i].strip() != ticks:
            body.append((i + 1, lines[i][indent:]))  # a fence in a list item is indented
            i += 1
        i += 1
        if lang not in RUN_LANGS:
            prompts = [n for n, ln in body if ln.startswith("$ ")]
            assert not prompts, (
                f"{rel}:{prompts[0]}: a `$ ` command in a ```{lang or '(plain)'} fence: commands a "
                "reader runs go in ```bash or ```console, so that this test runs them"
            )
            continue
        block = Block(rel, start + 1, lang, split_commands(body, lang))
        # the directives: an HTML comment ending on the last non-blank line before the fence
        before = "\n".join(lines[:start]).rstrip()
        if before.endswith("-->"):
            found = DIRECTIVE.fullmatch(before[before.rfind("<!--") :])
            if found:
                apply_directives(block, found.group(1))
                attached += 1
        blocks.append(block)
    stray = len(DIRECTIVE.findall(text)) - attached
    assert not stray, f"{rel}: {stray} guide-test comment(s) not right before a bash or console fence"
    return blocks


def check_directives(block: Block) -> None:
    """A directive that no longer matches the text it changes fails, so none goes stale."""
    if block.skip is not None:
        covers = re.findall(r"(?:tests|\.ci)/[\w./-]+", block.skip)
        assert covers and all((REPO / c.rstrip(".)")).exists() for c in covers), (
            f"{block.where()}: a skip must name the existing test that covers the block: {block.skip!r}"
        )
    joined = "\n".join(c.text for c in block.commands)
    for old, _new in block.replaces:
        assert old in joined, f"{block.where()}: replace {old!r}: not in the block"
    for path, old, _new in block.edits:
        assert old in (REPO / path).read_text(), f"{block.where()}: edit {path}: {old!r} not in it"


# ---------------------------------------------------------------- the copy a page runs in


def tracked_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    )
    return [name for name in out.stdout.decode().split("\0") if name]


def copy_numba_cache(src: Path, dest: Path) -> None:
    """numba's cache files (``__pycache__/*.nbi``, ``*.nbc``) of the package under ``src`` into
    the same places under ``dest``. Its index is keyed by the module's mtime and size, which the
    copies keep, not by its path, so a copy of the modules finds the code compiled for another."""
    for cache in (src / "pipeline").rglob("__pycache__"):
        for entry in cache.iterdir():
            if entry.suffix in (".nbi", ".nbc"):
                target = dest / cache.relative_to(src) / entry.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(entry, target)


def make_checkout(dest: Path, numba_stash: Path) -> None:
    """A fresh clone of this checkout (its working tree's tracked files), a ``.venv`` as ``make
    setup`` leaves it, and the numba cache of this checkout and of the pages run before."""
    for name in tracked_files():
        src = REPO / name
        if src.is_file():  # a tracked file deleted in the working tree is left out
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)  # keeps mtimes: numba's cache index checks them
    copy_numba_cache(REPO, dest)
    copy_numba_cache(numba_stash, dest)
    venv = dest / ".venv"
    bin_dir = venv / "bin"
    bin_dir.mkdir(parents=True)
    python = Path(sys.executable)
    here, interpreter = shlex.quote(str(dest)), shlex.quote(str(python))
    # shims, not links: a linked interpreter would not find its venv's packages
    shims = {"python": f'exec {interpreter} "$@"', "boggle": f'exec {interpreter} -m pipeline.cli "$@"'}
    shims["python3"] = shims["python"]
    for name, line in shims.items():
        (bin_dir / name).write_text(f"#!/bin/sh\nPYTHONPATH={here} {line}\n")
        (bin_dir / name).chmod(0o755)
    for tool in ("jupyter", "jupyter-execute", "pytest", "mkdocs"):
        found = python.parent / tool
        if found.exists():
            (bin_dir / tool).symlink_to(found)
    activate = f'VIRTUAL_ENV={shlex.quote(str(venv))}\nexport VIRTUAL_ENV\nPATH="$VIRTUAL_ENV/bin:$PATH"\n'
    (bin_dir / "activate").write_text(activate + "export PATH\n")
    # the stamps `make setup` and `make notebook` leave, newer than pyproject.toml
    for stamp in (".installed", ".notebook"):
        (venv / stamp).touch()


# ---------------------------------------------------------------- running a page


@dataclass
class Ran:
    block: Block
    command: Command
    text: str
    rc: int
    seconds: float
    stdout: str
    stderr: str


def run_command(text: str, checkout: Path, state: Path, env: dict[str, str]) -> tuple[int, str, str, float]:
    """``text`` in a new bash that starts where the previous command left the shell."""
    cwd_file = state.with_suffix(".cwd")
    script = (
        f"if [ -f {shlex.quote(str(state))} ]; then . {shlex.quote(str(state))}; fi\n"
        f'cd "$(cat {shlex.quote(str(cwd_file))} 2>/dev/null || echo {shlex.quote(str(checkout))})"\n'
        + "".join(f"export {name}={shlex.quote(value)}\n" for name, value in env.items())
        + "{ "
        + text
        + "\n}\n__guide_rc=$?\n"
        + "".join(f"unset {name}\n" for name in env)
        + f"export -p > {shlex.quote(str(state))}\npwd > {shlex.quote(str(cwd_file))}\nexit $__guide_rc\n"
    )
    started = time.monotonic()
    proc = subprocess.Popen(
        ["bash", "-c", script],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=base_environment(checkout),
    )
    try:
        out, err = proc.communicate(timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        err += f"\n[guide test: killed after {COMMAND_TIMEOUT} s]"
        return -9, out, err, time.monotonic() - started
    return proc.returncode, out, err, time.monotonic() - started


def base_environment(checkout: Path) -> dict[str, str]:
    """What a terminal in the checkout has after ``. .venv/bin/activate``: the venv's bin first
    on PATH (``boggle`` runs the copy's package), the session's lexicon cache (conftest)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOGGLE_", "PYTEST_", "COV_"))}
    env["BOGGLE_CACHE_DIR"] = os.environ["BOGGLE_CACHE_DIR"]
    env["PATH"] = f"{checkout / '.venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(checkout / ".venv")
    env["PYTHONPATH"] = str(checkout)  # as `pip install -e .` in the clone: jupyter kernels too
    env["COLUMNS"] = "120"
    return env


def job_dirs(root: Path) -> dict[str, str]:
    """Every job folder a page left (``runs/x``: its identity), and every new top-level file
    (its SHA-256): what two pages must not make differently under one name."""
    found = {}
    for record in root.rglob("_run.json"):
        rel = str(record.parent.relative_to(root))
        if rel.startswith("certificates/"):
            continue
        try:
            found[rel] = json.dumps(json.loads(record.read_text()).get("identity"), sort_keys=True)
        except (OSError, ValueError):
            found[rel] = "unreadable"
    return found


def new_files(root: Path, before: set[str]) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.iterdir()
        if p.is_file() and p.name not in before
    }


#: what each page left, for the check that no two pages collide (when run in one session)
LEFT: dict[str, dict[str, str]] = {}


@pytest.fixture(scope="session")
def numba_stash(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """numba's cache files compiled by the pages of this session, handed from page to page."""
    return tmp_path_factory.mktemp("numba-stash")


def page_id(path: Path) -> str:
    return path.stem


@pytest.mark.integration
@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_guide_runs_as_written(page: Path, tmp_path: Path, numba_stash: Path) -> None:
    blocks = parse_page(page)
    for block in blocks:
        check_directives(block)
    if not any(b.commands for b in blocks):
        pytest.skip(f"{page.name}: no shell blocks")
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the copy a page runs in is made from `git ls-files`")
    checkout = tmp_path / "checkout"
    make_checkout(checkout, numba_stash)
    before = {p.name for p in checkout.iterdir()}
    state = tmp_path / "shell-state.sh"
    ran: list[Ran] = []
    page_started = time.monotonic()
    try:
        for block in blocks:
            if block.skip is not None:
                print(f"{block.where()}: skipped: {block.skip}")
                continue
            for path, old, new in block.edits:
                target = checkout / path
                target.write_text(target.read_text().replace(old, new))
            for command in block.commands:
                text = command.text
                for old, new in block.replaces:
                    text = text.replace(old, new)
                rc, out, err, seconds = run_command(text, checkout, state, block.env)
                ran.append(Ran(block, command, text, rc, seconds, out, err))
                print(f"{block.page}:{command.line}: exit {rc} in {seconds:.1f} s: {text.splitlines()[0]}")
                if rc != command.expect:
                    tail = "\n".join(err.strip().splitlines()[-15:])
                    out_tail = "\n".join(out.strip().splitlines()[-5:])
                    pytest.fail(
                        f"{block.page}:{command.line} (block at line {block.line}): exit {rc}, "
                        f"documented {command.expect}\n$ {text}\n--- stderr (tail) ---\n{tail}\n"
                        f"--- stdout (tail) ---\n{out_tail}",
                        pytrace=False,
                    )
    finally:
        copy_numba_cache(checkout, numba_stash)  # what this page compiled, for the next
    print(f"{page.name}: {len(ran)} commands in {time.monotonic() - page_started:.1f} s")
    LEFT[page.name] = {**job_dirs(checkout), **new_files(checkout, before)}


@pytest.mark.integration
def test_guides_do_not_collide() -> None:
    """A reader runs the pages one after another in one checkout: no two pages may write one
    folder with different jobs, or one file with different contents (checked over the pages
    this session ran, in order, before this test)."""
    if len(LEFT) < 2:
        pytest.skip("needs the pages run first in this session (test_guide_runs_as_written)")
    found = clashes(LEFT)
    assert not found, "\n".join(found)


def clashes(left: dict[str, dict[str, str]]) -> list[str]:
    """The names (job folders, files) two pages make differently: page -> {name: identity}."""
    owner: dict[str, tuple[str, str]] = {}
    found = []
    for page, made in left.items():
        for name, identity in made.items():
            if name in owner and owner[name][1] != identity:
                found.append(f"{name}: {owner[name][0]} and {page} make it differently")
            owner.setdefault(name, (page, identity))
    return found


def test_guide_blocks_parse() -> None:
    """Every page parses, its directives match the text they change, and its skips name the
    test that covers them (fast: no command is run)."""
    for page in PAGES:
        for block in parse_page(page):
            check_directives(block)


def test_commands_prompts_continuations_heredocs_and_exit_codes() -> None:
    """How a block's lines become commands, on a made-up block of each kind."""
    console = [
        (1, "$ boggle run x \\"),
        (2, "> --out runs/x    # exits 4: another run there"),
        (3, "error: runs/x holds a different run"),
        (4, "$ boggle runs ls runs"),
        (5, "KIND  STATE"),
    ]
    got = [(c.text, c.line, c.expect) for c in split_commands(console, "console")]
    assert got == [
        ("boggle run x \\\n--out runs/x    # exits 4: another run there", 1, 4),
        ("boggle runs ls runs", 4, 0),
    ]
    bash = [
        (1, "# a comment"),
        (2, "cat > my.txt <<'EOF'"),
        (3, "# not a comment: the file's first line"),
        (4, "a b   # exits 3 is text of the file, not an expectation"),
        (5, "EOF"),
        (6, ""),
        (7, "boggle solve abcd  # 12 words; it exits 0"),
    ]
    got = [(c.text, c.line, c.expect) for c in split_commands(bash, "bash")]
    assert got == [
        (
            "cat > my.txt <<'EOF'\n# not a comment: the file's first line\n"
            "a b   # exits 3 is text of the file, not an expectation\nEOF",
            2,
            0,
        ),
        ("boggle solve abcd  # 12 words; it exits 0", 7, 0),
    ]


def test_pages_that_make_one_name_differently_clash() -> None:
    left = {
        "a.md": {"runs/smoke": "id1", "boards.txt": "h1"},
        "b.md": {"runs/smoke": "id1", "boards.txt": "h2", "runs/x": "id3"},
    }
    assert clashes(left) == ["boards.txt: a.md and b.md make it differently"]
