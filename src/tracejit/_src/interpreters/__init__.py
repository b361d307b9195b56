"""Interpreters of primitives: eager evaluation, staging, JVP, partial evaluation, transposition."""
