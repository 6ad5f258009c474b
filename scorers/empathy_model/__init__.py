"""The learned empathy signal (issue #16): next to the lexicon's ``empathy_signal``, not replacing it.

Runs off the inline path: ``attune model-stage`` in the stream, ``attune evaluate --empathy-model`` in
batch, both through :class:`ModelStage`. Needs the ``embeddings`` extra.
"""

from ._model import COMPONENTS, EmpathyEstimate, EmpathyModel, ModelFileError, features
from ._stage import DEFAULT_MAX_CONVERSATIONS, ModelInput, ModelStage, conversation_inputs

__all__ = [
    "COMPONENTS",
    "DEFAULT_MAX_CONVERSATIONS",
    "EmpathyEstimate",
    "EmpathyModel",
    "ModelFileError",
    "ModelInput",
    "ModelStage",
    "conversation_inputs",
    "features",
]
