"""The human calibration loop: annotation batches out and back in, and agreement between raters.

* :func:`export_batch` / :func:`import_annotations`: seed 003 annotation round trip.
* :func:`raters_from` + :func:`compute_agreement`: kappa and Spearman for every rater pair
  (humans, LLM judges, the cheap tier mapped onto the rubric), self-consistency on duplicates.
* :func:`empathy_ratings_report`: the empathy-ratings data set, the paper's kappa table reproduced,
  and the cheap tier as one more rater.
"""

from ._agreement import (
    AgreementReport,
    DimensionFlag,
    PairResult,
    RaterInfo,
    SelfConsistency,
    compute_agreement,
    render_agreement,
)
from ._empathy_ratings import (
    EmpathyDataset,
    EmpathyRatingsReport,
    empathy_ratings_report,
    expert_aggregate,
    half_of,
    load_empathy_ratings,
    render_empathy_ratings,
    reproduce_kappa_table,
)
from ._export import GENERATIONS, KEY_FILE, ExportError, ExportResult, csv_name, export_batch
from ._import import CsvError, ImportResult, find_csvs, import_annotations, load_key
from ._models import CSV_HEADER, DIMENSIONS, KAPPA_TARGET, Annotation, BatchKey, ItemRef
from ._raters import CHEAP_RATER, CHEAP_SOURCES, UNIT_BINS, Rater, cheap_rubric_scores, raters_from
from ._records import BadLine, read_jsonl
from ._stats import share_within, spearman, weighted_kappa

__all__ = [
    "CHEAP_RATER",
    "CHEAP_SOURCES",
    "CSV_HEADER",
    "DIMENSIONS",
    "GENERATIONS",
    "KAPPA_TARGET",
    "KEY_FILE",
    "UNIT_BINS",
    "AgreementReport",
    "Annotation",
    "BadLine",
    "BatchKey",
    "CsvError",
    "DimensionFlag",
    "EmpathyDataset",
    "EmpathyRatingsReport",
    "ExportError",
    "ExportResult",
    "ImportResult",
    "ItemRef",
    "PairResult",
    "Rater",
    "RaterInfo",
    "SelfConsistency",
    "cheap_rubric_scores",
    "compute_agreement",
    "csv_name",
    "empathy_ratings_report",
    "expert_aggregate",
    "export_batch",
    "find_csvs",
    "half_of",
    "import_annotations",
    "load_empathy_ratings",
    "load_key",
    "raters_from",
    "read_jsonl",
    "render_agreement",
    "render_empathy_ratings",
    "reproduce_kappa_table",
    "share_within",
    "spearman",
    "weighted_kappa",
]
