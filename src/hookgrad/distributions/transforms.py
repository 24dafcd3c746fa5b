"""torch's ``distributions.transforms``: every transform under its public name."""
from __future__ import annotations

from .transform_base import (ComposeTransform, IndependentTransform, ReshapeTransform, Transform,
                             _InverseTransform, identity_transform)
from .transform_join import CatTransform, StackTransform
from .transform_pointwise import (AbsTransform, AffineTransform,
                                  CumulativeDistributionTransform, ExpTransform, PowerTransform,
                                  SigmoidTransform, SoftplusTransform, TanhTransform)
from .transform_vector import (CorrCholeskyTransform, LowerCholeskyTransform,
                               PositiveDefiniteTransform, SoftmaxTransform, StickBreakingTransform)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "CorrCholeskyTransform",
           "CumulativeDistributionTransform", "StackTransform",
           "ComposeTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StickBreakingTransform", "Transform",
           "identity_transform", "_InverseTransform"]
