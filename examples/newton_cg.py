"""The JAX paper's Table 1: Truncated Newton-CG, compiled whole, against NumPy.

    python examples/newton_cg.py [--rounds 3]

Three problems (a convex quadratic, a hidden Markov model's likelihood, logistic regression)
are minimized by Truncated Newton-CG: Newton steps in `lax.while_loop`, conjugate gradient in
`lax.while_loop` with Hessian-vector products `jvp(grad(f))`, a backtracking line search,
and for the HMM the forward algorithm in `lax.scan`. The whole solver is one `jit`. NumPy
runs the same algorithm op by op with hand-written derivatives. The code is `tracejit.demo`'s
(also timed by `bench/control_flow.py`); this script prints the table and, with `--plot`,
draws the times.
"""

from __future__ import annotations

import support

from tracejit.demo import (
    ProgressBar,
    objectives_agree,
    quadratic_problem,
    table1_problems,
    time_newton_cg,
)


def main(argv=None):
    p = support.parser(__doc__.splitlines()[0], steps=0, plot="newton_cg.png")
    p.add_argument("--rounds", type=int, default=3, help="timed runs of each (default 3)")
    args = p.parse_args(argv)
    problems = [quadratic_problem()] if args.smoke else table1_problems()
    rounds = 1 if args.smoke else args.rounds
    rows = []
    for problem in problems:
        bar = ProgressBar(f"{problem.name:<9}", total=2 * rounds + 1)
        rows.append((problem, time_newton_cg(problem, rounds, rounds, numpy_budget_s=10.0,
                                             bar=bar)))  # fmt: skip
        bar.close()
    print(f"\n{'problem':<10} {'NumPy s':>8} {'jit s':>8} {'compile s':>9} {'speedup':>8} "
          f"{'paper':>6}  objectives agree")  # fmt: skip
    for problem, row in rows:
        print(f"{problem.name:<10} {row['numpy_s']:>8.3f} {row['jit_s']:>8.4f} "
              f"{row['compile_s']:>9.2f} {row['numpy_s'] / row['jit_s']:>7.1f}x "
              f"{problem.paper[2]:>5}x  {objectives_agree(row)}")  # fmt: skip
    print("paper: the speedup of JAX over Autograd+NumPy in the JAX paper's Table 1 (CPU)")
    if not args.smoke:
        names = [problem.name for problem, _ in rows]
        support.save_plot(
            args.plot,
            {
                "NumPy": (names, [row["numpy_s"] for _, row in rows], "o-"),
                "jit": (names, [row["jit_s"] for _, row in rows], "s-"),
            },
            xlabel="problem", title="Truncated Newton-CG: seconds per solve", logy=True,
        )  # fmt: skip
    return {problem.name: row for problem, row in rows}


if __name__ == "__main__":
    main()
