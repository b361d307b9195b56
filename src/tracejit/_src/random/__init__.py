"""The implementation of `tracejit.random`: `distributions` (keys, bits and the samplers that
are arithmetic on uniform and normal draws or on gamma draws) and `counts` (the discrete
samplers whose draws loop until accepted: poisson, binomial, multinomial) and `key_reuse`
(the `jax_debug_key_reuse` check every sampler is marked with)."""
