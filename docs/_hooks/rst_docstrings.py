"""Griffe extension for the API page: the package's docstrings are written for Sphinx-style
readers (``:func:`x```, ``x::`` literal blocks, ``>>>`` examples); this turns those bits into
Markdown so mkdocstrings renders them as code, not as stray colons and nested quotes."""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:func|class|mod|meth|data|attr|exc|obj):`~?([^`]+)`")


def markdown_docstring(text: str) -> str:
    """``text`` with Sphinx roles as code spans, ``::`` blocks and ``>>>`` runs fenced."""
    text = ROLE.sub(lambda m: f"`{m.group(1)}`", text)
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(">>>"):
            block = []
            while i < len(lines) and lines[i].strip():
                block.append(re.sub(r"\s*# doctest:.*$", "", lines[i].strip()))
                i += 1
            out += ["```pycon", *block, "```"]
            continue
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            out.append(line.rstrip()[:-1])  # "writes::" -> "writes:"
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
            indent = len(lines[i]) - len(lines[i].lstrip()) if i < len(lines) else 0
            block = []
            while i < len(lines) and (
                not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) >= indent
            ):
                block.append(lines[i][indent:])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            out += ["", "```text", *block, "```", ""]
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class RstToMarkdown(griffe.Extension):
    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_docstring(obj.docstring.value)
