"""The three-address IR: lifting, type inference, CFG utilities, lowering, interpreter."""
from __future__ import annotations
