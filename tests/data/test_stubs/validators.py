"""Input validation for a sign-up form."""

from __future__ import annotations

RESERVED_NAMES = ("admin", "root", "system")
MAX_USERNAME = 16


class ValidationError(Exception):
    """A value the form cannot accept."""


def validate_port(port: int) -> int:
    """The port, if it is a valid TCP port number.

    >>> validate_port(8080)
    8080
    >>> validate_port(0)
    Traceback (most recent call last):
        ...
    ValueError: port out of range: 0
    """
    if not isinstance(port, int) or isinstance(port, bool):
        raise TypeError("port must be an int")
    if port < 1 or port > 65535:
        raise ValueError(f"port out of range: {port}")
    return port


def validate_username(name: str) -> str:
    """The normalised (lowercase) user name.

    >>> validate_username("Alice_99")
    'alice_99'
    """
    if not name:
        raise ValidationError("user name is required")
    if len(name) > MAX_USERNAME:
        raise ValidationError("user name is too long")
    if not name.replace("_", "").isalnum():
        raise ValidationError("only letters, digits and underscores")
    if name.lower() in RESERVED_NAMES:
        raise ValidationError("this name is reserved")
    return name.lower()


def validate_email(address: str) -> str:
    """The address, stripped, if it looks like an e-mail address.

    >>> validate_email(" ada@example.org ")
    'ada@example.org'
    """
    address = address.strip()
    if address.count("@") != 1:
        raise ValidationError("an address has exactly one @")
    local, domain = address.split("@")
    if not local:
        raise ValidationError("nothing before the @")
    if "." not in domain:
        raise ValidationError("the domain needs a dot")
    return address


def check_age(age: int, minimum: int = 18) -> bool:
    """Whether ``age`` reaches ``minimum``; negative ages are rejected.

    >>> check_age(21)
    True
    >>> check_age(16)
    False
    >>> check_age(16, minimum=16)
    True
    """
    if age < 0:
        raise ValueError("age cannot be negative")
    if age > 150:
        raise ValueError("age is not plausible")
    return age >= minimum


def require_fields(data: dict[str, str], *fields: str) -> None:
    """Raise if any of ``fields`` is missing or blank in ``data``.

    >>> require_fields({"name": "Ada", "email": "ada@example.org"}, "name", "email")
    >>> require_fields({"name": " "}, "name")
    Traceback (most recent call last):
        ...
    validators.ValidationError: name is required
    """
    for name in fields:
        if not data.get(name, "").strip():
            raise ValidationError(f"{name} is required")
