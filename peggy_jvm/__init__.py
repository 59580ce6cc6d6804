"""peggy-jvm: a JVM bytecode optimizer and translation validator built on equality saturation."""
from __future__ import annotations

__version__ = "0.1.0"
