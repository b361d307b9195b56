"""The implementation of `tracejit.random`: `distributions` (keys, bits and the samplers that
are arithmetic on uniform and normal draws), `gamma_family` (gamma draws and what is made of
them), `counts` (the discrete samplers whose draws loop until accepted: poisson, binomial,
multinomial) and `key_reuse` (the `jax_debug_key_reuse` check every sampler is marked with)."""
