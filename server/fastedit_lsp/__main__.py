"""``python -m fastedit_lsp`` = the ``fastedit-lsp`` command."""

import sys

from .cli import main

sys.exit(main())
