"""`tracejit.scipy.optimize`: `minimize` by BFGS, as JAX has it: a `while_loop` over BFGS
steps (`bfgs`), each with a line search for the strong Wolfe conditions (`line_search`); the
whole minimization can be jitted, and `fun` is differentiated with `value_and_grad`."""
