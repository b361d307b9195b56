"""Lowering jaxprs to StableHLO text for XLA."""
