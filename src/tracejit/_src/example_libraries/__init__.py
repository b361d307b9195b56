"""JAX's example libraries: `stax` (neural-network layers) and `optimizers`."""
