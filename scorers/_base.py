"""The value types every scorer speaks. Plain frozen dataclasses: they sit on the per-turn hot path."""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import overload

from schemas import Message, Severity, TurnContext

_DEFAULT_CONTEXT = TurnContext()


@dataclass(frozen=True, slots=True)
class Exchange:
    """One assistant reply with what it answers: the unit of per-turn scoring.

    ``user_text`` is the nearest earlier user message ("" if the assistant spoke first);
    ``history`` holds the earlier messages, oldest first, without the reply itself.
    """

    conversation_id: str
    turn_index: int
    user_text: str
    response: str
    history: tuple[Message, ...] = ()
    context: TurnContext = field(default_factory=lambda: _DEFAULT_CONTEXT)

    @property
    def channel(self) -> str:
        return self.context.channel


@dataclass(frozen=True, slots=True)
class Signal:
    """A deterministic detection (crisis cue, harmful pattern...) with the short span that matched."""

    category: str
    evidence: str
    severity: Severity = "high"


def _index(message: Message) -> int:
    return message.turn_index  # type: ignore[return-value]  # Transcript.add admits only indexed messages


class Transcript(Sequence[Message]):
    """A conversation's messages in turn-index order, each carrying its ``turn_index``.

    The stream buffers turns as they arrive, almost always in order: :meth:`add` is then a list append, and a
    late turn is inserted where it belongs, so no reader ever sorts. Indices are expected to be unique; a
    message whose index is already present goes after it (the order a stable sort by index gives).
    """

    __slots__ = ("_last", "_messages")

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = []
        self._last = -1
        for m in messages:
            self.add(m)

    def add(self, message: Message) -> None:
        i = message.turn_index
        if i is None:
            raise ValueError("a transcript message needs its turn_index")
        if i >= self._last:
            self._messages.append(message)
            self._last = i
        else:
            insort(self._messages, message, key=_index)

    def before(self, turn_index: int) -> Sequence[Message]:
        """The messages with a smaller index, oldest first: what a reply at ``turn_index`` answers. In the
        usual case (the reply is the newest turn) that is every message, returned without a copy."""
        if turn_index > self._last:
            return self._messages
        return self._messages[: bisect_left(self._messages, turn_index, key=_index)]

    @overload
    def __getitem__(self, i: int) -> Message: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[Message]: ...

    def __getitem__(self, i: int | slice) -> Message | Sequence[Message]:
        return self._messages[i]

    def __len__(self) -> int:
        return len(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._messages)

    def __repr__(self) -> str:
        return f"Transcript({self._messages!r})"
