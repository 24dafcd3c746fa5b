"""Learning-rate schedules with torch's names, formulas (step for step) and state_dicts."""
from .base import LRScheduler
from .basic import (ConstantLR, CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR,
                    MultiplicativeLR, MultiStepLR, PolynomialLR, StepLR)
from .compose import ChainedScheduler, ReduceLROnPlateau, SequentialLR
from .cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR

_LRScheduler = LRScheduler  # torch's older name, still importable there

__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR",
           "MultiStepLR", "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau",
           "SequentialLR", "StepLR"]
