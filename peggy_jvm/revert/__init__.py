"""Reversion: PEG -> IR control-flow graph (see :mod:`.revert`)."""
