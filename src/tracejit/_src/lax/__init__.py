"""The primitives, one family per module, each primitive with all of its rules."""
