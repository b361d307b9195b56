"""The implementation of tracejit; the public modules re-export from here (docs/layout.md)."""
