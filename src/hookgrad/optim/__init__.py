"""Optimizers and learning-rate schedules with torch's names, math and state_dict format."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import (Optimizer, register_optimizer_step_post_hook,
                        register_optimizer_step_pre_hook)
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "RMSprop", "SGD", "lr_scheduler",
           "register_optimizer_step_post_hook", "register_optimizer_step_pre_hook"]
