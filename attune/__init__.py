"""attune: streaming evaluator for empathetic and supportive dialogue."""

__version__ = "0.1.0"
