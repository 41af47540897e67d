"""The seeds' classic puzzles: spell-check a word on dice (``check``), the robot search-tree walk
(``search_tree``) and N-queens driven by it (``queens``). Only the CLI imports them.
"""
