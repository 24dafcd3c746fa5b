"""hookgrad.nn: modules, parameters and layers (torch.nn's names)."""
from . import functional, init, modules, utils
from .modules import Flatten, Identity, Module, ModuleDict, ModuleList, Sequential, Unflatten
from .parameter import Buffer, Parameter
