"""tracejit's exception types (`jax.errors`)."""

from tracejit._src.errors import (  # noqa: F401
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JaxprTypeError,
    JaxRuntimeError,
    JAXTypeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)
