"""Optimizers and learning-rate schedules with torch's names, math and state_dict format."""
from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .adagrad import Adadelta, Adagrad
from .adam import Adam, AdamW
from .adam_variants import Adamax, NAdam, RAdam
from .asgd_rprop import ASGD, Rprop
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import (Optimizer, register_optimizer_step_post_hook,
                        register_optimizer_step_pre_hook)
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS",
           "Muon", "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "lr_scheduler",
           "swa_utils",
           "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]
