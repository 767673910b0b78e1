"""The language's values other than tensors, and how they are called: the built-ins (derived from the engine),
namespaces, modules and optimizers, transforms, hook handles, function values; how arguments become the
engine's, and how failures become the language's messages."""

from .surfaces import parameter_paths  # for names.py (until it moves into tell/)

__all__ = ["parameter_paths"]
