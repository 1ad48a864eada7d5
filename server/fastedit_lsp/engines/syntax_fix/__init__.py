"""Offline syntax repair, one module per kind of parser.

- :mod:`.python`: Python, checked by ``compile()`` (its own tokenizer and candidates: a missing
  colon, bracket, quote, indentation);
- :mod:`.treesitter`: the languages with a tree-sitter grammar (``engines.parse``), inserting
  what tree-sitter reports missing, checked by a reparse.

Both answer ``error_region(source)`` and ``repair(...)``; the ``fixSyntax`` action picks the
module by the document's language (``actions/syntax.py``, ``actions/syntax_tree.py``).
"""
