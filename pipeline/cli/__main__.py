"""``python -m pipeline.cli``: the ``boggle`` command."""

from pipeline.cli import main

main()
