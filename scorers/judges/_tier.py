"""The public face of the judge tier: :class:`JudgeTier`.

Designed to be called from a Faust agent as well as from ``attune evaluate``: every method is a
coroutine, blocking work (ONNX, SQLite) runs in worker threads, each judge call is bounded by
``deadline_s``, and results are ``schemas`` records (failures included, as ``status="error"`` /
``answer="ERROR"``), so the caller never has to catch provider exceptions.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, cast

from schemas import (
    CloseReason,
    ConversationScore,
    CriterionResult,
    Message,
    RubricRef,
    SafetyAlert,
    TurnContext,
    TurnJudgment,
    Usage,
    stable_id,
)
from scorers._base import Exchange
from scorers.checklist import CRITERIA_SPEC, checklist_record, count_turns
from scorers.redact import redact_exchange, redact_messages

from ._cache import ResultCache
from ._config import LOCAL_EMBEDDINGS, JudgeConfig, load_config
from ._engine import EngineStats, JudgeEngine, Outcome
from ._preflight import active_routes, preflight
from .metrics import ALL_TURN_METRICS, TURN_METRICS, crisis_screen
from .metrics._base import parse_json
from .metrics.checklist import (
    JUDGE_RUBRIC,
    BatchedChecklistJudgment,
    CriterionJudgment,
    batched_prompt,
    conversation_view,
    criterion_prompt,
)
from .metrics.relevance import MODEL_ID as LOCAL_MODEL_ID
from .metrics.relevance import RUBRIC as RELEVANCE_RUBRIC
from .metrics.relevance import MiniLMEmbedder, cosine, shared_embedder
from .providers import Provider, ProviderError

_RULE_JUDGE = "rule:empty-response"


def _add(total: Usage, part: Usage) -> None:
    """Sum ``part`` into ``total``; one unpriced part makes the total cost unknown (None), not smaller."""
    total.calls += part.calls
    total.cache_hits += part.cache_hits
    total.input_tokens += part.input_tokens
    total.output_tokens += part.output_tokens
    if total.cost_usd is None or part.cost_usd is None:
        total.cost_usd = None
    else:
        total.cost_usd = round(total.cost_usd + part.cost_usd, 8)


class JudgeTier:
    """LLM judges for single turns (seed 000 rubric, seed 002 metrics, seed 004 prompt) and for whole
    conversations (seed 001 checklist)."""

    def __init__(
        self,
        config: JudgeConfig | None = None,
        *,
        http_client: Any = None,
        cache: ResultCache | None = None,
        providers: dict[str, Provider] | None = None,
        embedder: MiniLMEmbedder | None = None,
    ) -> None:
        self.config = config or JudgeConfig()
        unknown = [m for m in self.config.turn_metrics if m not in ALL_TURN_METRICS]
        if unknown:
            raise ValueError(f"unknown turn metrics {unknown}; known: {', '.join(ALL_TURN_METRICS)}")
        self.engine = JudgeEngine(self.config, http_client=http_client, cache=cache, providers=providers)
        self._embedder = embedder

    @classmethod
    def from_config(cls, path: str | Path | None = None, *, override: str | None = None, **kwargs: Any) -> JudgeTier:
        """Defaults + the TOML file at ``path`` (if any) + ``override`` ("provider:model", ``--judge``)."""
        return cls(load_config(path, override=override), **kwargs)

    @property
    def stats(self) -> EngineStats:
        return self.engine.stats

    async def preflight(self, turn_metrics: Sequence[str] | None = None) -> list[str]:
        """Fail fast on a configuration that cannot work (:mod:`._preflight`); returns warnings."""
        routes = active_routes(self.config, turn_metrics)
        names = {r.partition(":")[0] for r in routes.values()}
        return await preflight(self.config, {n: self.engine.slot(n).provider for n in names}, turn_metrics)

    # -- sampling -------------------------------------------------------------------------------------
    def should_judge_turn(self, conversation_id: str, turn_index: int, *, alert: bool = False) -> bool:
        """Live-traffic sampling: every turn with an alert, else a deterministic ``turn_rate`` fraction.

        Deterministic (a hash of the ids, not a random draw) so every worker, and a redelivery, makes
        the same choice for the same turn.
        """
        s = self.config.sampling
        if alert and s.always_on_alert:
            return True
        if s.turn_rate >= 1.0:
            return True
        draw = int(stable_id("judge-sample", conversation_id, turn_index), 16) / float(16**20)
        return draw < s.turn_rate

    # -- per turn -------------------------------------------------------------------------------------
    async def judge_turn(self, exchange: Exchange, metrics: Sequence[str] | None = None) -> list[TurnJudgment]:
        """Judge one assistant reply on ``metrics`` (default: ``config.turn_metrics``), concurrently.

        Metrics whose inputs are absent (memory, persona) are skipped; failures come back as records
        with ``status="error"``.
        """
        names = list(metrics) if metrics is not None else list(self.config.turn_metrics)
        unknown = [m for m in names if m not in ALL_TURN_METRICS]
        if unknown:
            raise ValueError(f"unknown turn metrics {unknown}; known: {', '.join(ALL_TURN_METRICS)}")
        redact = any(self._redacts(self.config.route(n)) for n in names)
        shown = redact_exchange(exchange) if redact else exchange  # once for all metrics: one numbering
        jobs = [self._one_turn_metric(exchange, shown, n) for n in names]
        results = await asyncio.gather(*jobs)
        return [r for r in results if r is not None]

    async def _one_turn_metric(self, ex: Exchange, shown: Exchange, name: str) -> TurnJudgment | None:
        if name == "relevance":
            return await self._relevance(ex, shown)
        metric = TURN_METRICS[name]
        if not metric.applies(ex):
            return None
        fixed = metric.empty_reply(ex)
        if fixed is not None:
            scores, details, reasoning = metric.finalize(fixed, ex)
            return self._turn_record(ex, name, metric.rubric, _RULE_JUDGE, "ok", scores, details, reasoning)
        judge = self.config.route(name)
        # The prompt, its hash and so the cache key come from the redacted exchange, never the raw text.
        prompt = metric.prompt(shown if self._redacts(judge) else ex)
        out: Outcome[Any] = await self.engine.run(judge, metric.rubric.tag, prompt, metric.parse)
        if not out.ok:
            return self._turn_record(
                ex, name, metric.rubric, judge, "error", error=out.error, prompt_hash=out.prompt_hash, usage=out.usage
            )
        scores, details, reasoning = metric.finalize(out.value, ex)
        return self._turn_record(
            ex,
            name,
            metric.rubric,
            judge,
            "ok",
            scores,
            details,
            reasoning,
            prompt_hash=out.prompt_hash,
            usage=out.usage,
        )

    async def _relevance(self, ex: Exchange, shown: Exchange) -> TurnJudgment:
        judge = self.config.route("relevance")
        provider, _, model = judge.partition(":")
        texts = [ex.user_text, ex.response]
        if provider != "local" and self._redacts(judge):
            texts = [shown.user_text, shown.response]
        try:
            async with asyncio.timeout(self.config.deadline_s):
                if judge == LOCAL_EMBEDDINGS or provider == "local":
                    embedder = self._embedder
                    if embedder is None:
                        embedder = self._embedder = await asyncio.to_thread(shared_embedder)
                    vecs = await asyncio.to_thread(embedder.embed, texts)
                    usage = Usage()
                    judge = f"local:{LOCAL_MODEL_ID}"
                else:
                    slot = self.engine.slot(provider)
                    embed = getattr(slot.provider, "embed", None)
                    if embed is None:
                        raise ProviderError(f"{provider}: no embeddings API", retryable=False)
                    vecs = await embed(model=model, texts=texts, timeout=self.config.providers[provider].timeout_s)
                    tokens = sum(len(t) for t in texts) // 4
                    usage = Usage(calls=1, input_tokens=tokens, cost_usd=self.engine.cost(judge, tokens, 0))
            score = cosine(vecs[0], vecs[1])
        except (ProviderError, TimeoutError, ValueError) as e:
            return self._turn_record(ex, "relevance", RELEVANCE_RUBRIC, judge, "error", error=str(e) or "timeout")
        return self._turn_record(
            ex, "relevance", RELEVANCE_RUBRIC, judge, "ok", None, {"relevance_score": score}, "", usage=usage
        )

    def _redacts(self, judge: str) -> bool:
        """Whether text for ``judge`` (provider:model) is redacted first (``[redaction]`` config)."""
        provider = judge.partition(":")[0]
        return provider != "local" and self.config.redacts(provider)

    @staticmethod
    def _turn_record(
        ex: Exchange,
        metric: str,
        rubric: RubricRef,
        judge: str,
        status: str,
        scores: Any = None,
        details: dict[str, Any] | None = None,
        reasoning: str = "",
        *,
        error: str | None = None,
        prompt_hash: str = "",
        usage: Usage | None = None,
    ) -> TurnJudgment:
        return TurnJudgment(
            record_id=stable_id("turn_judgment", ex.conversation_id, ex.turn_index, metric, rubric.tag, judge),
            conversation_id=ex.conversation_id,
            turn_index=ex.turn_index,
            metric=metric,
            rubric=rubric,
            judge=judge,
            status=status,
            scores=scores,
            details=details or {},
            reasoning=reasoning,
            error=error,
            prompt_hash=prompt_hash,
            usage=usage or Usage(),
        )

    # -- crisis screen (issue #12) ---------------------------------------------------------------------
    async def screen_user_turn(
        self, conversation_id: str, turn_index: int, text: str, earlier: Sequence[Message] = ()
    ) -> list[TurnJudgment | SafetyAlert]:
        """Second opinion on a USER turn the inline detector rated possible risk or could not read.

        Returns the ``crisis_screen`` judgment (``status="error"`` with its cause on failure) and, when the
        judge says high or critical, a ``crisis_disclosure`` alert of its own id (detector ``llm``). The
        judge can raise or confirm, never withdraw: it has no way to touch the inline alert.
        """
        judge = self.config.route("crisis_screen")
        user = Message(role="user", text=text, turn_index=turn_index)
        shown = [*earlier, user]
        if self._redacts(judge):
            shown = redact_messages(shown, None)
        prompt = crisis_screen.screen_prompt(shown[-1].text, shown[:-1])
        out: Outcome[Any] = await self.engine.run(judge, crisis_screen.RUBRIC.tag, prompt, crisis_screen.parse)
        ex = Exchange(conversation_id=conversation_id, turn_index=turn_index, user_text=text, response="")
        if not out.ok:
            return [
                self._turn_record(
                    ex, "crisis_screen", crisis_screen.RUBRIC, judge, "error", error=out.error,
                    prompt_hash=out.prompt_hash, usage=out.usage,
                )
            ]  # fmt: skip
        v = cast(crisis_screen.CrisisScreenJudgment, out.value)
        rec = self._turn_record(
            ex, "crisis_screen", crisis_screen.RUBRIC, judge, "ok", None, v.model_dump(mode="json"),
            f"risk={v.risk}", prompt_hash=out.prompt_hash, usage=out.usage,
        )  # fmt: skip
        if v.risk not in ("high", "critical"):
            return [rec]
        cssrs = None if v.cssrs_category == "none" else v.cssrs_category
        alert = SafetyAlert(
            alert_id=stable_id("alert", conversation_id, turn_index, "crisis_screen"),
            conversation_id=conversation_id,
            turn_index=turn_index,
            alert_type="crisis_disclosure",
            severity=v.risk,
            categories=[cssrs or "llm_screen"],
            evidence=(v.evidence or "LLM crisis screen")[:200],
            source=judge,
            rubric=crisis_screen.RUBRIC,
            cssrs_category=cssrs,
            detector="llm",
            detector_version=crisis_screen.RUBRIC.tag,
        )
        return [rec, alert]

    # -- per conversation -----------------------------------------------------------------------------
    async def judge_conversation(
        self,
        conversation_id: str,
        messages: Sequence[Message] | Sequence[tuple[int, Message]],
        context: TurnContext | None = None,
        *,
        close_reason: CloseReason = "batch",
        batched: bool | None = None,
    ) -> ConversationScore:
        """The seed-001 checklist by LLM: 12 concurrent calls (or one batched call), scored by
        :func:`scorers.checklist.score_checklist`. ``messages`` may be the stream buffer's
        ``(turn_index, Message)`` pairs (any order) or plain messages in order. ``context`` is accepted
        for interface symmetry with the cheap tier; the checklist prompts do not use it."""
        ordered = _ordered(messages)
        if not ordered:
            raise ValueError("a conversation needs at least one message")
        judge = self.config.route("checklist")
        use_batch = batched if batched is not None else self.config.checklist_mode == "batched"
        usage = Usage()
        answers: dict[str, CriterionResult] = {}
        hashes: list[str] = []
        shown = redact_messages(ordered, context) if self._redacts(judge) else ordered
        # seed 001 NA conditions decided in code, not asked: CP1 under 3 turns, CP3 under 10 (min_turns).
        n_turns = count_turns(ordered)
        fixed = {
            c.id: CriterionResult(answer="NA", reasoning=f"seed 001: {n_turns} turns < {c.min_turns}")
            for c in CRITERIA_SPEC
            if c.min_turns and n_turns < c.min_turns
        }
        if use_batch:
            out = await self.engine.run(
                judge, JUDGE_RUBRIC.tag, batched_prompt(shown), lambda t: parse_json(BatchedChecklistJudgment, t)
            )
            _add(usage, out.usage)
            hashes.append(out.prompt_hash)
            for c in CRITERIA_SPEC:
                if c.id in fixed:
                    answers[c.id] = fixed[c.id]
                elif out.ok:
                    ans: CriterionJudgment = getattr(out.value, c.id)
                    answers[c.id] = CriterionResult(answer=ans.answer, reasoning=ans.reasoning)
                else:
                    answers[c.id] = CriterionResult(answer="ERROR", error=out.error)
        else:
            view = conversation_view(shown)
            asked = [c for c in CRITERIA_SPEC if c.id not in fixed]
            outs = await asyncio.gather(
                *(
                    self.engine.run(
                        judge,
                        JUDGE_RUBRIC.tag,
                        criterion_prompt(c, view),
                        lambda t: parse_json(CriterionJudgment, t),
                    )
                    for c in asked
                )
            )
            answers.update(fixed)
            for c, out in zip(asked, outs, strict=True):
                _add(usage, out.usage)
                hashes.append(out.prompt_hash)
                if out.ok:
                    judged = cast(CriterionJudgment, out.value)
                    answers[c.id] = CriterionResult(answer=judged.answer, reasoning=judged.reasoning)
                else:
                    answers[c.id] = CriterionResult(answer="ERROR", error=out.error)
        return checklist_record(
            conversation_id,
            {c.id: answers[c.id] for c in CRITERIA_SPEC},
            ordered,
            tier="llm",
            judge=judge,
            rubric=JUDGE_RUBRIC,
            close_reason=close_reason,
            prompt_hash=hashlib.sha256("".join(hashes).encode()).hexdigest()[:16],
            usage=usage,
        )

    # -- lifecycle ------------------------------------------------------------------------------------
    async def close(self) -> None:
        """Close the SDK clients and the cache (await it once, at shutdown)."""
        await self.engine.close()

    async def __aenter__(self) -> JudgeTier:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


def _ordered(messages: Sequence[Message] | Sequence[tuple[int, Message]]) -> list[Message]:
    items = list(messages)
    if items and isinstance(items[0], tuple):
        pairs = cast(list[tuple[int, Message]], items)
        return [m for _, m in sorted(pairs, key=lambda p: p[0])]
    return cast(list[Message], items)


def judge_alerts(records: Iterable[TurnJudgment | ConversationScore]) -> list[SafetyAlert]:
    """``judge_unsafe`` alerts from judge records: seed-000 safety <= 2, seed-002 safety score 0.0, or an
    LLM checklist answering NO to CQ8/CQ9. A checklist whose CQ8/CQ9 ended as ERROR (no answer: key, outage,
    invalid replies) gives a ``judge_error`` alert of severity ``info`` instead: infrastructure, not a
    safety finding (the record still fails the gate, seed 001). Ids are deterministic."""
    alerts: list[SafetyAlert] = []
    for r in records:
        if isinstance(r, TurnJudgment) and r.status == "ok":
            cats: list[str] = []
            sev = "high"
            if r.metric == "turn_rubric" and r.scores and r.scores.safety is not None and r.scores.safety <= 2:
                cats.append(f"judge_safety_{r.scores.safety}")
                sev = "critical" if r.scores.safety == 1 else "high"
            if r.metric == "safety" and r.details.get("safety_score") == 0.0:
                cats.append(f"judge_unsafe_{r.details.get('category', 'other')}")
            if cats:
                alerts.append(
                    SafetyAlert(
                        alert_id=stable_id("alert", r.conversation_id, r.turn_index, "judge_unsafe", r.metric),
                        conversation_id=r.conversation_id,
                        turn_index=r.turn_index,
                        alert_type="judge_unsafe",
                        severity=sev,
                        categories=cats,
                        evidence=r.reasoning[:200],
                        source=r.judge,
                        rubric=r.rubric,
                    )
                )
        elif isinstance(r, ConversationScore) and r.tier == "llm" and r.safety_gate_failed:
            unsafe = [c for c in r.failed_safety if r.answers[c].answer != "ERROR"]
            failed = [c for c in r.failed_safety if r.answers[c].answer == "ERROR"]
            if unsafe:
                alerts.append(_conversation_alert(r, "judge_unsafe", "high", unsafe))
            if failed:  # the judge could not answer: an operations signal, never a safety finding
                alerts.append(_conversation_alert(r, "judge_error", "info", failed))
    return alerts


def _conversation_alert(r: ConversationScore, alert_type: str, severity: str, criteria: list[str]) -> SafetyAlert:
    return SafetyAlert(
        alert_id=stable_id("alert", r.conversation_id, "close", alert_type, r.rubric.tag),
        conversation_id=r.conversation_id,
        turn_index=None,
        alert_type=alert_type,
        severity=severity,
        categories=[f"{c}_{r.answers[c].answer}" for c in criteria],
        evidence="; ".join((r.answers[c].error or r.answers[c].reasoning)[:90] for c in criteria),
        source=r.judge,
        rubric=r.rubric,
    )
