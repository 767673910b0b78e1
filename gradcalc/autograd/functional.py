"""Placeholder: jacobian and hessian are being written."""
