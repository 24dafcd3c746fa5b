"""Utilities built on the public hook API (hooks, checkpoint)."""
from . import hooks
