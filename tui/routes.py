"""Which handler each message the app receives goes to: a typed table instead of one method per message."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from textual.message import Message

MessageType = TypeVar("MessageType", bound=Message)


@dataclass(frozen=True)
class Route(Generic[MessageType]):
    """Messages of exactly ``message`` go to ``handler``."""

    message: type[MessageType]
    handler: Callable[[MessageType], None]


def message_routes(*groups: Iterable[Route[Any]]) -> dict[type[Message], Route[Any]]:
    """The routes by message type; a type routed twice is a mistake (one of them would never run)."""
    table: dict[type[Message], Route[Any]] = {}
    for route in (r for group in groups for r in group):
        if route.message in table:
            raise ValueError(f"{route.message.__name__} is routed twice")
        table[route.message] = route
    return table
