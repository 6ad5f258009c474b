"""Turn events in, ``TurnModelScore`` records out: the one code path of the stream stage and of batch.

The model reads a reply together with the seeker's message before it (where its weights ask for one), so
the stage remembers the latest user turn of each open conversation. Memory is bounded: at most
``max_conversations`` conversations, the least recently active forgotten first; a conversation's entry
goes at its end event or final turn. A reply whose user turn was never seen here (forgotten, or before a
restart's committed offset) is scored with no seeker message and says so (``seeker_turn_index`` None),
and its ``record_id`` differs from that of a score made with the context.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from schemas import Conversation, ConversationEnd, ConversationReplay, Metadata, TurnModelScore, stable_id
from schemas import Turn as TurnEvent

from ._model import EmpathyModel

DEFAULT_MAX_CONVERSATIONS = 50_000


@dataclass(frozen=True, slots=True)
class ModelInput:
    conversation_id: str
    turn_index: int
    response: str
    seeker: str | None
    seeker_turn_index: int | None
    metadata: Metadata | None


class ModelStage:
    def __init__(self, model: EmpathyModel, max_conversations: int = DEFAULT_MAX_CONVERSATIONS) -> None:
        if max_conversations < 1:
            raise ValueError("max_conversations must be at least 1")
        self.model = model
        self.max_conversations = max_conversations
        self._last_user: OrderedDict[str, tuple[int, str]] = OrderedDict()
        self.forgotten = 0  # conversations dropped to keep the bound (a metric, not an error)

    def __len__(self) -> int:
        return len(self._last_user)

    def feed(self, event: TurnEvent | ConversationEnd | ConversationReplay) -> ModelInput | None:
        """Remember a user turn; an assistant turn becomes model input; an end or a replay forgets the
        conversation."""
        cid = event.conversation_id
        if not isinstance(event, TurnEvent):
            self._last_user.pop(cid, None)
            return None
        out: ModelInput | None = None
        if event.role == "user":
            prev = self._last_user.get(cid)
            if prev is None or prev[0] < event.turn_index:  # a late, older user turn is not the latest
                self._last_user[cid] = (event.turn_index, event.text)
            self._last_user.move_to_end(cid)
            while len(self._last_user) > self.max_conversations:
                self._last_user.popitem(last=False)
                self.forgotten += 1
        else:
            seen = self._last_user.get(cid)
            seeker = seen if seen is not None and seen[0] < event.turn_index else None
            out = ModelInput(
                cid,
                event.turn_index,
                event.text,
                seeker[1] if seeker else None,
                seeker[0] if seeker else None,
                event.metadata,
            )
        if event.end_of_conversation:
            self._last_user.pop(cid, None)
        return out

    def score(self, inputs: Sequence[ModelInput]) -> list[TurnModelScore]:
        """Blocking (ONNX): one embedding pass for the whole batch."""
        if not inputs:
            return []
        estimates = self.model.score([i.response for i in inputs], [i.seeker for i in inputs])
        tag = self.model.tag
        return [
            TurnModelScore(
                record_id=stable_id("turn_model_score", i.conversation_id, i.turn_index, tag, i.seeker_turn_index),
                conversation_id=i.conversation_id,
                turn_index=i.turn_index,
                rubric=self.model.rubric,
                embedder=self.model.embedder_id,
                empathy=e.empathy,
                components=e.components,
                seeker_turn_index=i.seeker_turn_index,
                metadata=dict(i.metadata or {}),
            )
            for i, e in zip(inputs, estimates, strict=True)
        ]


def conversation_inputs(stage: ModelStage, conversations: Iterable[Conversation]) -> list[ModelInput]:
    """Batch: each conversation's turns fed in turn order, as the stream sees them when none is late."""
    out: list[ModelInput] = []
    for conv in conversations:
        for turn in sorted(conv.as_turns(), key=lambda t: t.turn_index):
            if (item := stage.feed(turn)) is not None:
                out.append(item)
    return out
