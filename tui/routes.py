"""Which handler each message the app receives goes to: a typed table instead of one method per message."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from textual.message import Message

MessageType = TypeVar("MessageType", bound=Message)


@dataclass(frozen=True)
class Route(Generic[MessageType]):
    """Messages of exactly ``message`` go to ``handler`` (a coroutine function when the handler lets the event
    loop in midway: the app waits for it before its next message, so messages stay in order)."""

    message: type[MessageType]
    handler: Callable[[MessageType], None | Awaitable[None]]


def message_routes(receiver: type, *groups: Iterable[Route[Any]]) -> dict[type[Message], Route[Any]]:
    """The routes by message type. A type routed twice, or routed and also handled by an ``on_...``
    method of ``receiver`` (Textual would call both), is a mistake that fails here, at once."""
    table: dict[type[Message], Route[Any]] = {}
    for route in (r for group in groups for r in group):
        if route.message in table:
            raise ValueError(f"{route.message.__name__} is routed twice")
        if hasattr(receiver, route.message.handler_name):
            raise ValueError(f"{route.message.__name__} is routed and also handled by "
                             f"{receiver.__name__}.{route.message.handler_name}: keep the route")
        table[route.message] = route
    return table
