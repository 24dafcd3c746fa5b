"""Savers: pack/unpack pairs that store saved activations in fewer resident bytes."""
from .base import Saver, Stored, View
from .cast import cast
from .offload import offload
from .quantize import quantize

__all__ = ["Saver", "Stored", "View", "cast", "offload", "quantize"]
