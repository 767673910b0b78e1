"""The engine's names for explain/ and names.py, which still import them from here (until they move into tell/;
then this module goes)."""

from .values.engine import ENGINE

__all__ = ["ENGINE"]
