"""`error_from` for saved.py, which still imports it from here (until it moves; then this module goes)."""

from .values.failures import error_from

__all__ = ["error_from"]
