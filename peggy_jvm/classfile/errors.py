"""Errors raised by the class-file layer.

Owns: the exception types every module of ``peggy_jvm.classfile`` raises for bad input or for code it cannot
handle. Invariant: a message says *what* is wrong and *where* (byte offset, constant index, method), in one
line, so the CLI can print it as ``peggy-jvm: error: <file>: <message>`` without a traceback.
"""
from __future__ import annotations


class ClassFileError(ValueError):
    """Malformed or truncated class file data (a user's input is bad)."""


class UnsupportedCodeError(Exception):
    """Well-formed code that a stage cannot process; the method is kept unchanged with this reason."""
