"""fastedit-lsp: fast and safe inline AI edits for any LSP editor."""

__version__ = "0.1.0"
