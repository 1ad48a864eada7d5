"""Sample module for `fastedit-lsp demo`: a syntax error to fix."""


def total(items):
    result = 0
    for item in items
        result += item.price * item.quantity
    return result


def names(items):
    return [item.name for item in items]
