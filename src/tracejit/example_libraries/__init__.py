"""`tracejit.example_libraries` (`jax.example_libraries`): `stax` and `optimizers`."""
