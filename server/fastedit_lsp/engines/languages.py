"""The languages the parse check knows: grammar names, and how an editor or a path names them.

Pure (no ``tree_sitter``: the server reads these tables before any grammar loads);
``engines.parse`` loads the grammars named here.
"""

from __future__ import annotations

import posixpath

#: Grammar name → (module, function returning the language pointer).
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
}

#: LSP ``languageId``s (VS Code's, Neovim's filetypes, eglot's mode-derived names) → grammar.
LANGUAGE_IDS: dict[str, str] = {
    "python": "python",
    "py": "python",
    "javascript": "javascript",
    "javascriptreact": "javascript",
    "js": "javascript",
    "jsx": "javascript",
    "typescript": "typescript",
    "ts": "typescript",
    "typescriptreact": "tsx",
    "tsx": "tsx",
    "go": "go",
    "golang": "go",
    "rust": "rust",
    "rs": "rust",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "c++": "cpp",
    "cuda": "cpp",
    "csharp": "c_sharp",
    "c-sharp": "c_sharp",
    "c_sharp": "c_sharp",
    "cs": "c_sharp",
}

#: File extensions → grammar (when the languageId says nothing we know).
EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".cs": "c_sharp",
}

#: How the check names a grammar to the user.
DISPLAY = {
    "python": "Python",
    "javascript": "JavaScript",
    "typescript": "TypeScript",
    "tsx": "TSX",
    "go": "Go",
    "rust": "Rust",
    "java": "Java",
    "c": "C",
    "cpp": "C++",
    "c_sharp": "C#",
}


def language_of(uri_or_language_id: str) -> str | None:
    """The grammar for an LSP ``languageId`` (``typescriptreact``, eglot's ``js-ts``...) or a
    file's path or URI (by its extension); None when there is none."""
    key = uri_or_language_id.strip().lower()
    if not key:
        return None
    bare = key.removesuffix("-ts").removesuffix("-mode")
    if bare in LANGUAGE_IDS:
        return LANGUAGE_IDS[bare]
    path = key.split("?", 1)[0].split("#", 1)[0]
    _, extension = posixpath.splitext(path)
    return EXTENSIONS.get(extension)
