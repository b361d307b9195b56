"""Implementation of `tracejit.nn` (see `functions`)."""
