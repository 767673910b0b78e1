"""The renderers for explain/, graph.py and saved.py, which still import them from here (until they move into
tell/; then this module goes)."""

from .tell.render import plain, tensor_json, torch_repr

__all__ = ["plain", "tensor_json", "torch_repr"]
