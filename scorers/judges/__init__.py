"""The LLM-judge tier: providers, routing, versioned rubrics, and the call engine behind them.

Entry point: :class:`JudgeTier` (``from_config``, ``judge_turn``, ``judge_conversation``,
``should_judge_turn``, ``close``) and :func:`judge_alerts`. Judge jobs (:mod:`._jobs`: ``turn_job``,
``screen_job``, ``checklist_job``, ``run_job``) are the unit both the stream and ``attune evaluate`` build
and run. A judge failure is always an ERROR in the record (``status="error"`` / ``answer="ERROR"``), never
a default score.
"""

from ._cache import ResultCache, cache_key
from ._config import (
    DEFAULT_PRICES,
    DEFAULT_ROUTES,
    JudgeConfig,
    Price,
    ProviderConfig,
    default_cache_path,
    load_config,
)
from ._engine import ERROR_CAUSES, EngineStats, InvalidReply, JudgeEngine, Outcome, error_cause
from ._jobs import (
    SCREEN_HISTORY,
    TURN_JOB_HISTORY,
    checklist_job,
    error_records,
    exchange_of,
    needs_screen,
    run_job,
    screen_job,
    turn_job,
    with_verdict,
)
from ._limits import CircuitBreaker, RateLimiter
from ._preflight import JudgeConfigError, active_routes, check_judges
from ._prompt import Prompt, data_block
from ._tier import JudgeTier, judge_alerts
from .metrics import ALL_TURN_METRICS, TURN_METRICS
from .metrics.checklist import JUDGE_RUBRIC as CHECKLIST_JUDGE_RUBRIC
from .metrics.groundedness import aggregate_groundedness
from .metrics.memory_utilization import MemoryScore, aggregate_memory, memory_scores
from .metrics.voice_judge import decide_release, parse_score_line, quality_level, release_decision

__all__ = [
    "ALL_TURN_METRICS",
    "CHECKLIST_JUDGE_RUBRIC",
    "DEFAULT_PRICES",
    "DEFAULT_ROUTES",
    "ERROR_CAUSES",
    "SCREEN_HISTORY",
    "TURN_JOB_HISTORY",
    "TURN_METRICS",
    "CircuitBreaker",
    "EngineStats",
    "InvalidReply",
    "JudgeConfig",
    "JudgeConfigError",
    "JudgeEngine",
    "JudgeTier",
    "MemoryScore",
    "Outcome",
    "Price",
    "Prompt",
    "ProviderConfig",
    "RateLimiter",
    "ResultCache",
    "active_routes",
    "aggregate_groundedness",
    "aggregate_memory",
    "cache_key",
    "check_judges",
    "checklist_job",
    "data_block",
    "decide_release",
    "default_cache_path",
    "error_cause",
    "error_records",
    "exchange_of",
    "judge_alerts",
    "load_config",
    "memory_scores",
    "needs_screen",
    "parse_score_line",
    "quality_level",
    "release_decision",
    "run_job",
    "screen_job",
    "turn_job",
    "with_verdict",
]
