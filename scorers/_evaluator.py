"""The cheap tier behind one interface, called identically by the stream agents and ``attune evaluate``.

The stream owns state (buffers in tables); the evaluator is stateless apart from its settings, so the
same turn always produces the same records (ids included) on any worker, on redelivery, and in batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from schemas import (
    SEVERITY_ORDER,
    CloseReason,
    Conversation,
    ConversationScore,
    Message,
    OutputRecord,
    RubricRef,
    SafetyAlert,
    TurnContext,
    TurnScore,
    stable_id,
)

from ._base import Exchange, Signal, Transcript
from .checklist import RUBRIC as CHECKLIST_RUBRIC
from .checklist import checklist_record, heuristic_checklist
from .edge_cases import prejudge
from .empathy import empathy_signal
from .safety import RUBRIC as SAFETY_RUBRIC
from .safety import (
    CrisisAssessment,
    assess_crisis,
    detect_crisis,
    detect_harmful_reply,
    detect_user_dependency,
    detector_version,
    offers_crisis_resources,
)
from .verdict import conversation_verdict
from .voice import RUBRIC as VOICE_RUBRIC
from .voice import score_voice

_DEFAULT_CONTEXT = TurnContext()


class ScoredTurn(Protocol):
    """What the close reads of each reply's score: a ``TurnScore``, or the stream's slimmer summary of one."""

    @property
    def metrics(self) -> Mapping[str, float]: ...

    @property
    def empathy(self) -> float: ...


@dataclass(frozen=True, slots=True)
class UserTurnResult:
    #: every alert of the turn: those of the turn alone, then any that only earlier turns explain
    alerts: list[SafetyAlert]
    #: a rule (or a pattern across turns) found a crisis: the next reply owes crisis resources
    crisis: bool
    #: cue tags this turn adds to the conversation (risk built across turns); the caller keeps them
    cues: frozenset[str] = frozenset()
    #: the crisis detector covers this turn's language (False: a ``crisis_not_covered`` alert went out)
    covered: bool = True
    #: which crisis detector fired (None: none did)
    detector: str | None = None
    #: the alerts (of ``alerts``) that exist only because of earlier turns (risk built across turns, or a
    #: severity it raised); the rest are :meth:`Evaluator.turn_alerts`, which the stream's alert path sends
    needs_history: list[SafetyAlert] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AssistantTurnResult:
    score: TurnScore
    alerts: list[SafetyAlert]


def _alert(
    conversation_id: str,
    turn_index: int,
    alert_type: str,
    signals: Sequence[Signal],
    rubric: RubricRef,
    severity: str | None = None,
) -> SafetyAlert:
    sev = severity or max((s.severity for s in signals), key=SEVERITY_ORDER.__getitem__, default="high")
    return SafetyAlert(
        alert_id=stable_id("alert", conversation_id, turn_index, alert_type),
        conversation_id=conversation_id,
        turn_index=turn_index,
        alert_type=alert_type,
        severity=sev,
        categories=sorted({s.category for s in signals}),
        evidence="; ".join(dict.fromkeys(s.evidence for s in signals))[:200],
        source="heuristic",
        rubric=rubric,
    )


class Evaluator:
    """Cheap deterministic tier: crisis alerts, per-turn heuristics, the heuristic checklist."""

    turn_rubric: RubricRef = VOICE_RUBRIC
    checklist_rubric: RubricRef = CHECKLIST_RUBRIC
    safety_rubric: RubricRef = SAFETY_RUBRIC

    # -- user turns: alerts first, nothing here may wait on anything slow -----------------------------
    def on_user_turn(
        self, conversation_id: str, turn_index: int, text: str, prior_cues: frozenset[str] = frozenset()
    ) -> UserTurnResult:
        """Alerts for one user turn. ``prior_cues``: the cue tags earlier user turns of the conversation left
        (``UserTurnResult.cues`` of each), so risk built across turns alerts too.

        The turn's own alerts (:meth:`turn_alerts`) are computed from its text alone, so the stream's alert
        path (streams._alert_path), which keeps no state, sends exactly these. Earlier turns can add one
        crisis alert: where the turn alone raised none (id ``crisis_disclosure``, as ever), or where they
        raise its severity (a separate id, ``crisis_disclosure`` + ``history``), never a changed copy of it.
        """
        alone = assess_crisis(text)
        a = assess_crisis(text, prior_cues) if prior_cues else alone
        alerts = self._turn_alerts(conversation_id, turn_index, text, alone)
        needs_history: list[SafetyAlert] = []
        raised = alone.alert and SEVERITY_ORDER[a.severity or "info"] > SEVERITY_ORDER[alone.severity or "info"]
        if a.alert and (not alone.alert or raised):
            needs_history.append(self._crisis_alert(conversation_id, turn_index, text, a, history=alone.alert))
        return UserTurnResult(
            alerts=[*alerts, *needs_history],
            crisis=a.crisis,
            cues=a.cues,
            covered=a.covered,
            detector=a.detector,
            needs_history=needs_history,
        )

    def turn_alerts(self, conversation_id: str, turn_index: int, text: str) -> list[SafetyAlert]:
        """The alerts a user turn raises on its own text: crisis (without the conversation's cues), language
        not covered, dependency. Identical wherever and however often computed (deterministic ids)."""
        return self._turn_alerts(conversation_id, turn_index, text, assess_crisis(text))

    def _turn_alerts(self, conversation_id: str, turn_index: int, text: str, a: CrisisAssessment) -> list[SafetyAlert]:
        alerts: list[SafetyAlert] = []
        if a.alert:
            alerts.append(self._crisis_alert(conversation_id, turn_index, text, a))
        if not a.covered:
            alerts.append(
                SafetyAlert(
                    alert_id=stable_id("alert", conversation_id, turn_index, "crisis_not_covered"),
                    conversation_id=conversation_id,
                    turn_index=turn_index,
                    alert_type="crisis_not_covered",
                    severity="possible",
                    categories=["language_not_covered"],
                    evidence=f"detected {a.language}; the crisis detector covers English",
                    source="heuristic",
                    rubric=self.safety_rubric,
                    detector_version=detector_version(),
                )
            )
        dependency = detect_user_dependency(text)
        if dependency:
            alerts.append(_alert(conversation_id, turn_index, "dependency", dependency, self.safety_rubric))
        return alerts

    def _crisis_alert(
        self, conversation_id: str, turn_index: int, text: str, a: CrisisAssessment, *, history: bool = False
    ) -> SafetyAlert:
        legacy = [s.category for s in detect_crisis(text)]
        cats = sorted({*legacy, *(f.cssrs for f in a.findings)} | ({a.cssrs} if a.cssrs else set()))
        if any(f.frame.startswith("anchor+model:") for f in a.findings):
            cats.append("anchor_model")  # no rule combined it: an anchor concept the model confirmed
        if a.danger_model_fired and not a.findings and a.conversation is None:
            # only the danger model: danger from another person, no rule to name it (severity possible)
            cats = sorted({*cats, "danger_from_others", "model_only"})
        evidence = "; ".join(dict.fromkeys(f.evidence for f in a.findings)) or a.evidence
        return SafetyAlert(
            alert_id=stable_id(
                "alert", conversation_id, turn_index, "crisis_disclosure", *(("history",) if history else ())
            ),
            conversation_id=conversation_id,
            turn_index=turn_index,
            alert_type="crisis_disclosure",
            severity=a.severity,
            categories=cats or ["model_only"],
            evidence=evidence[:200],
            source="heuristic",
            rubric=self.safety_rubric,
            cssrs_category=a.cssrs,
            detector=a.detector,
            # the probability of the model that fired: the danger model's when it alone raised the alert
            probability=a.danger_probability if a.danger_model_fired and not a.model_fired else a.probability,
            detector_version=detector_version(),
        )

    # -- assistant turns ------------------------------------------------------------------------------
    def on_assistant_turn(
        self, ex: Exchange, *, answers_crisis_turn: int | None, history_complete: bool = True
    ) -> AssistantTurnResult:
        """Score one reply. ``answers_crisis_turn`` is the index of the user crisis turn it answers, if any;
        ``history_complete`` False when earlier turns of the conversation are missing (the record says so and
        its id differs from a full-history score of the same turn)."""
        resources = offers_crisis_resources(ex.response)
        harmful = detect_harmful_reply(ex.response)
        crisis_signals = detect_crisis(ex.user_text) if answers_crisis_turn is not None else []
        edge = prejudge(ex, crisis_signals=crisis_signals, resources_offered=resources)
        metrics = score_voice(ex)
        score = TurnScore(
            record_id=stable_id(
                "turn_score",
                ex.conversation_id,
                ex.turn_index,
                self.turn_rubric.tag,
                *(() if history_complete else ("partial", len(ex.history))),
            ),
            conversation_id=ex.conversation_id,
            turn_index=ex.turn_index,
            rubric=self.turn_rubric,
            channel=ex.context.channel,
            metrics=metrics,
            empathy=empathy_signal(ex),
            edge_case=edge,
            flags=sorted({s.category for s in harmful}),
            word_count=len(ex.response.split()),
            history_complete=history_complete,
        )
        alerts: list[SafetyAlert] = []
        if answers_crisis_turn is not None and not resources:
            unanswered = [Signal("no_crisis_resources", "reply offers no hotline or emergency service", "critical")]
            alerts.append(
                _alert(
                    ex.conversation_id,
                    ex.turn_index,
                    "crisis_unanswered",
                    [*crisis_signals, *unanswered],
                    self.safety_rubric,
                    severity="critical",
                )
            )
        dep = [s for s in harmful if s.category == "dependency"]
        other = [s for s in harmful if s.category != "dependency"]
        if other:
            alerts.append(_alert(ex.conversation_id, ex.turn_index, "harmful_reply", other, self.safety_rubric))
        if dep:
            alerts.append(_alert(ex.conversation_id, ex.turn_index, "dependency", dep, self.safety_rubric))
        return AssistantTurnResult(score=score, alerts=alerts)

    # -- conversation close ---------------------------------------------------------------------------
    def on_close(
        self,
        conversation_id: str,
        messages: Sequence[Message],
        context: TurnContext | None,
        close_reason: CloseReason,
        turn_scores: Iterable[ScoredTurn] = (),
    ) -> ConversationScore:
        """Run the heuristic 12-criterion checklist over the messages in turn order (a :class:`Transcript`)
        and score it (seed 001)."""
        ordered = list(messages)
        ctx = context or _DEFAULT_CONTEXT
        answers = heuristic_checklist(ordered, ctx)
        summary: dict[str, list[float]] = {}
        for ts in turn_scores:
            for k, v in ts.metrics.items():
                summary.setdefault(k, []).append(v)
            summary.setdefault("empathy", []).append(ts.empathy)
        return checklist_record(
            conversation_id,
            answers,
            ordered,
            tier="cheap",
            judge="heuristic",
            rubric=self.checklist_rubric,
            close_reason=close_reason,
            turn_summary={k: round(sum(v) / len(v), 4) for k, v in summary.items()},
        )


def exchange_for(
    conversation_id: str,
    turn_index: int,
    response: str,
    earlier: Sequence[tuple[int, Message]],
    context: TurnContext | None,
) -> Exchange:
    """Build the Exchange for a reply from ``(turn_index, message)`` pairs in any order (those with indices below
    ``turn_index`` are its history), for callers holding no :class:`Transcript`."""
    prior = sorted((p for p in earlier if p[0] < turn_index), key=lambda p: p[0])
    return exchange_after(conversation_id, turn_index, response, [m for _, m in prior], context)


def exchange_after(
    conversation_id: str,
    turn_index: int,
    response: str,
    history: Sequence[Message],
    context: TurnContext | None,
) -> Exchange:
    """:func:`exchange_for` when ``history`` is already exactly the earlier messages, oldest first.

    The stream's and the batch path's case (:meth:`Transcript.before`): no filtering or sorting of the whole
    history per reply, only a copy into the tuple and a backwards scan to the nearest user message.
    """
    user_text = next((m.text for m in reversed(history) if m.role == "user"), "")
    return Exchange(
        conversation_id=conversation_id,
        turn_index=turn_index,
        user_text=user_text,
        response=response,
        history=tuple(history),
        context=context or _DEFAULT_CONTEXT,
    )


def exchanges_of(conv: Conversation) -> list[Exchange]:
    """Every assistant reply of a whole conversation as the Exchange the scorers (and judges) take."""
    turns = conv.as_turns()
    transcript = Transcript(Message(role=t.role, text=t.text, turn_index=t.turn_index) for t in turns)
    return [
        exchange_after(conv.conversation_id, t.turn_index, t.text, transcript.before(t.turn_index), conv.context)
        for t in turns
        if t.role == "assistant"
    ]


def evaluate_conversation(
    conv: Conversation, evaluator: Evaluator | None = None, close_reason: CloseReason = "batch", *, verdict: bool = True
) -> list[OutputRecord]:
    """Batch path: feed the turns in order through the same calls the stream makes, then close.

    A crisis turn stays pending until the next assistant reply, which must offer crisis resources. With
    ``verdict`` the cheap-only :class:`ConversationVerdict` ends the list (a judged run builds its own).
    """
    ev = evaluator or Evaluator()
    out: list[OutputRecord] = []
    buffered = Transcript()
    scores: list[TurnScore] = []
    crisis_turn: int | None = None
    cues: frozenset[str] = frozenset()
    turns = conv.as_turns()
    present = {t.turn_index for t in turns}
    for turn in turns:
        if turn.role == "user":
            res = ev.on_user_turn(turn.conversation_id, turn.turn_index, turn.text, cues)
            cues |= res.cues
            out.extend(res.alerts)
            if res.crisis:
                crisis_turn = turn.turn_index
        else:
            earlier = buffered.before(turn.turn_index)
            ex = exchange_after(turn.conversation_id, turn.turn_index, turn.text, earlier, conv.context)
            complete = all(i in present for i in range(turn.turn_index))  # the stream's rule (streams._core)
            ares = ev.on_assistant_turn(ex, answers_crisis_turn=crisis_turn, history_complete=complete)
            crisis_turn = None
            scores.append(ares.score)
            out.append(ares.score)
            out.extend(ares.alerts)
        buffered.add(Message(role=turn.role, text=turn.text, turn_index=turn.turn_index))
    score = ev.on_close(conv.conversation_id, buffered, conv.context, close_reason, scores)
    out.append(score)
    if verdict:
        out.append(conversation_verdict(score, [r for r in out if isinstance(r, SafetyAlert)]))
    return with_metadata(out, conv.metadata)


def with_metadata(records: list[OutputRecord], metadata: dict | None) -> list[OutputRecord]:
    """Stamp the producer's metadata on every record derived from its input (the stream does the same)."""
    if metadata:
        for r in records:
            r.metadata = metadata
    return records
