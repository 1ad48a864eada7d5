"""A shop's stock: quantities per item, and a bounded undo history."""

from __future__ import annotations

from dataclasses import dataclass, field


class OutOfStockError(Exception):
    """Not enough of an item to take."""


class Inventory:
    """Item quantities.

    >>> inv = Inventory()
    >>> inv.add("apple", 3)
    >>> inv.count("apple")
    3
    """

    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def add(self, name: str, quantity: int = 1) -> None:
        """Put ``quantity`` of ``name`` into stock.

        >>> inv = Inventory()
        >>> inv.add("pear", 2)
        >>> inv.add("pear")
        >>> inv.count("pear")
        3
        """
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        if not name:
            raise ValueError("name must not be empty")
        self.items[name] = self.items.get(name, 0) + quantity

    def remove(self, name: str, quantity: int = 1) -> int:
        """Take ``quantity`` of ``name`` out of stock; what is left.

        >>> inv = Inventory()
        >>> inv.add("fig", 5)
        >>> inv.remove("fig", 2)
        3
        >>> inv.remove("fig", 9)
        Traceback (most recent call last):
            ...
        inventory.OutOfStockError: only 3 fig left
        """
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        have = self.items.get(name, 0)
        if have < quantity:
            raise OutOfStockError(f"only {have} {name} left")
        self.items[name] = have - quantity
        return self.items[name]

    def count(self, name: str) -> int:
        """How many of ``name`` are in stock.

        >>> Inventory().count("plum")
        0
        """
        return self.items.get(name, 0)

    def report(self) -> list[str]:
        """The stock as ``name: quantity`` lines, sorted by name.

        >>> inv = Inventory()
        >>> inv.add("kiwi", 4)
        >>> inv.add("banana", 6)
        >>> inv.report()
        ['banana: 6', 'kiwi: 4']
        """
        return [f"{name}: {qty}" for name, qty in sorted(self.items.items())]


class Stack:
    """A last-in first-out stack with a size limit."""

    def __init__(self, limit: int = 100) -> None:
        self.limit = limit
        self._items: list[object] = []

    def push(self, item: object) -> None:
        """Push ``item``.

        >>> s = Stack(limit=1)
        >>> s.push("a")
        >>> s.push("b")
        Traceback (most recent call last):
            ...
        OverflowError: stack is full
        """
        if len(self._items) >= self.limit:
            raise OverflowError("stack is full")
        self._items.append(item)

    def pop(self) -> object:
        """Remove and return the top item.

        >>> s = Stack()
        >>> s.push(1)
        >>> s.push(2)
        >>> s.pop()
        2
        >>> s.pop()
        1
        """
        if not self._items:
            raise IndexError("pop from an empty stack")
        return self._items.pop()


@dataclass
class Temperature:
    """A temperature in degrees Celsius."""

    celsius: float
    history: list[float] = field(default_factory=list)

    def to_fahrenheit(self) -> float:
        """The same temperature in Fahrenheit.

        >>> Temperature(100).to_fahrenheit()
        212.0
        >>> Temperature(-40).to_fahrenheit()
        -40.0
        """
        return self.celsius * 9 / 5 + 32

    def set(self, celsius: float) -> None:
        """Change the temperature, remembering the previous one.

        >>> t = Temperature(20)
        >>> t.set(25)
        >>> t.history
        [20]
        """
        if celsius < -273.15:
            raise ValueError("below absolute zero")
        self.history.append(self.celsius)
        self.celsius = celsius
