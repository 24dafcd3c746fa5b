"""Layers. Each family lives in its own file; this package lists them all."""
from .container import Flatten, Identity, ModuleDict, ModuleList, Sequential, Unflatten
from .module import Module
