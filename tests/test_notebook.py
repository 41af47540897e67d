"""The board-quality notebook runs clean against a small run and is committed without outputs.

Parameters are injected the way papermill does it (a cell right after the one tagged
``parameters``), with nbformat and nbclient alone: no extra dependency for one assignment.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ALPHA, BETA, REPO, read_side_json, write_run

# the notebook extra (`make dev`, `make notebook`); `make setup` alone does not install it
nbformat = pytest.importorskip("nbformat")
NotebookClient = pytest.importorskip("nbclient").NotebookClient

pytestmark = pytest.mark.integration  # each test executes the notebook in a Jupyter kernel
NOTEBOOK = REPO / "notebooks" / "board_quality.ipynb"


# A number in scientific notation as pandas would print it (1.5e+06, 2e-05).
SCIENTIFIC = re.compile(r"\d(?:\.\d+)?e[+-]\d+")


def execute(run_dir: Path, **params: Any) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    idx = next(i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", []))
    assigns = {"run_dir": str(run_dir), **params}
    source = "\n".join(f"{k} = {json.dumps(v)}" for k, v in assigns.items())
    injected = nbformat.v4.new_code_cell(source, metadata={"tags": ["injected-parameters"]})
    nb.cells.insert(idx + 1, injected)
    # CellExecutionError (with the failing cell's traceback) if any cell raises. The kernel
    # starts in notebooks/, as Jupyter starts it.
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    return nb


def outputs_text(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                parts.append(out["text"])
            for key in ("text/plain", "text/html"):
                if key in out.get("data", {}):
                    parts.append(out["data"][key])
    return "\n".join(parts)


def test_notebook_is_committed_clean_and_parameterised() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1 and "run_dir = None" in tagged[0].source
    # The notebook calls the library rather than re-implementing it.
    assert "from pipeline.analyze import" in "\n".join(c.source for c in code)


def test_notebook_runs_against_a_small_run(tmp_path: Path) -> None:
    run = write_run(tmp_path / "alpha", ALPHA)
    nb = execute(run, top=3)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    text = outputs_text(nb)
    assert "test-words" in text  # provenance
    # the whole run (5 boards in parts of 3), not its first part
    assert re.search(r"count\s+5\s+5\s+5\b", text), text  # counts as integers
    assert not SCIENTIFIC.search(text)
    assert "[th]ose" in text  # the best board
    assert re.search(r"boards with < 10 words\s+80\.0%", text), text  # shares as percentages
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    # cumulative + 2 distributions, by length, longest word, faces, best board (no dice: a note)
    assert len(images) == 7
    assert "no per-die analysis" in text and "set compare_dirs" in text


def test_notebook_runs_against_the_smoke_run(smoke_run: Path) -> None:
    nb = execute(smoke_run)
    text = outputs_text(nb)
    manifest = read_side_json(smoke_run)
    assert manifest["lexicon"]["name"] in text
    assert "2000" in text.replace(",", "")
    assert re.search(r"count\s+2,000\b", text)
    assert not SCIENTIFIC.search(text)
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 8  # and the dice ranking: the smoke run rolls the new dice
    assert "die" in text and "value" in text


def test_notebook_compares_several_runs(tmp_path: Path) -> None:
    alpha = write_run(tmp_path / "alpha", ALPHA)
    beta = write_run(tmp_path / "beta", BETA, chunk_size=2)
    nb = execute(alpha, compare_dirs=[str(beta)])
    text = outputs_text(nb)
    assert "beta: mean score 41.7% lower than alpha, but the 95% CI" in text
    assert not SCIENTIFIC.search(text)
    assert "one run: set compare_dirs" not in text


def test_notebook_compares_the_runs_of_boggle_compare_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$BOGGLE_COMPARE_DIRS names the runs to compare (no edit of the notebook); the tables have
    headers for people and rows numbered from 0."""
    alpha = write_run(tmp_path / "alpha", ALPHA)
    beta = write_run(tmp_path / "beta", BETA, chunk_size=2)
    monkeypatch.setenv("BOGGLE_COMPARE_DIRS", f"{beta},")
    nb = execute(alpha)
    text = outputs_text(nb)
    assert "beta: mean score 41.7% lower than alpha, but the 95% CI" in text
    assert "one run: set compare_dirs" not in text
    for raw in ("adj_effect", "share_with", "words_per_board", "reference_value", "diff_low"):
        assert raw not in text, raw
    for header in ("adjusted effect", "boards with it", "words per board", "first run"):
        assert header in text, header
    # the face table (best five and worst five faces) is numbered 0..n-1, not by face order
    faces = next(c for c in nb.cells if "effects.head(5)" in c.source)
    html = next(o["data"]["text/html"] for o in faces.outputs if "text/html" in o.get("data", {}))
    index = [int(x) for x in re.findall(r"<tr>\s*<th>(\d+)</th>", html)]
    assert index == list(range(len(index))) and len(index) > 1


def test_notebook_refuses_an_unfinished_run(tmp_path: Path) -> None:
    from nbclient.exceptions import CellExecutionError

    run = write_run(tmp_path / "half", ALPHA, finished=False)
    with pytest.raises(CellExecutionError, match="_SUCCESS"):
        execute(run)


def test_jupyter_execute_from_the_notebooks_folder(tmp_path: Path) -> None:
    """What a user types: ``jupyter execute`` on the committed notebook, started in notebooks/
    (Jupyter's default), the run named by $BOGGLE_RUN_DIR instead of an injected parameter."""
    run = write_run(tmp_path / "alpha", ALPHA)
    out = tmp_path / "executed.ipynb"
    jupyter = Path(sys.executable).with_name("jupyter")
    env = {**os.environ, "BOGGLE_RUN_DIR": str(run)}
    res = subprocess.run(
        [str(jupyter), "execute", NOTEBOOK.name, f"--output={out}"],
        cwd=NOTEBOOK.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    text = outputs_text(nbformat.read(out, as_version=4))
    assert "test-words" in text and "[th]ose" in text  # the run $BOGGLE_RUN_DIR names
    assert re.search(r"count\s+5\b", text)
    assert nbformat.read(NOTEBOOK, as_version=4).cells[2].get("outputs") == []  # committed copy untouched
