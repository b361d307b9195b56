"""Implementation of `tracejit.scipy` (see `special`)."""
