"""Boggle board-quality pipeline: generate or ingest boards, solve them exactly, analyse."""

__version__ = "0.1.0"
