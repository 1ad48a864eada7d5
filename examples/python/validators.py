"""Sample module for `fastedit-lsp demo`: regex generation and complete-the-rest."""

import re

# regex: ISO date pattern
#   match: 2024-01-31
#   match: 1999-12-01
#   reject: 2024-1-31
#   reject: 24-01-31


def is_iso_date(text: str) -> bool:
    return ISO_DATE_PATTERN.fullmatch(text) is not None


def is_email(text: str) -> bool:
    return EMAIL_PATTERN.fullmatch(text) is not None


def is_version(text: str) -> bool:
    return VERSION_PATTERN.fullmatch(
