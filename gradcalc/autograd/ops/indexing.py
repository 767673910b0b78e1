"""Placeholder: being written."""

METHODS: dict = {}
FUNCTIONS: dict = {}
