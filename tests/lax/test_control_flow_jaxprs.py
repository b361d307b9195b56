"""Golden jaxprs of the control-flow primitives: what `make_jaxpr` prints for cond, switch,
while_loop, fori_loop (a scan with a static trip count, a while otherwise), scan, their
derivatives and their vmaps, as JAX 0.10.2 prints them; where ours differs on purpose, ours is
asserted and the difference explained."""

import numpy as np
from helpers import jaxpr_text

import tracejit as jax
import tracejit.numpy as jnp
from tracejit import lax

f32, i32 = np.float32, np.int32


# --- cond and switch ------------------------------------------------------------------------------


def test_jaxpr_cond():
    fun = lambda x: lax.cond(x > 0, lambda a: a + 3.0, lambda a: a - 3.0, x)
    assert (
        jaxpr_text(fun, np.float32(1.5))
        == """\
{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = sub e 3.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = add g 3.0:f32[] in (h,) }
      )
    ] c a
  in (d,) }"""
    )


def test_jaxpr_cond_closure_becomes_leading_operand():
    fun = lambda x, w: lax.cond(x > 0, lambda a: a * w, lambda a: a, x)
    assert (
        jaxpr_text(fun, np.float32(1.5), np.float32(2))
        == """\
{ lambda ; a:f32[] b:f32[]. let
    c:bool[] = gt a 0.0:f32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[] g:f32[]. let  in (g,) }
        { lambda ; h:f32[] i:f32[]. let j:f32[] = mul i h in (j,) }
      )
    ] d b a
  in (e,) }"""
    )


def test_jaxpr_switch():
    def fun(i, x):
        return lax.switch(i, [lambda a: a + 1.0, lambda a: a * 2.0, jnp.sin], x)

    assert (
        jaxpr_text(fun, np.int32(1), np.float32(1.5))
        == """\
{ lambda ; a:i32[] b:f32[]. let
    c:i32[] = clamp 0:i32[] a 2:i32[]
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = add e 1.0:f32[] in (f,) }
        { lambda ; g:f32[]. let h:f32[] = mul g 2.0:f32[] in (h,) }
        { lambda ; i:f32[]. let j:f32[] = sin i in (j,) }
      )
    ] c b
  in (d,) }"""
    )


def test_jaxpr_grad_of_cond():
    """JAX 0.10.2 merges the branches' residuals of equal type into one output and fills a
    branch's missing ones with `empty2[dtype=float32 memory_space=MemorySpace.Device]`; we
    deliberately give each branch's residuals their own outputs, zeros in the other branches
    (so the printout differs from JAX's in the residual lists only)."""
    fun = jax.grad(lambda x: lax.cond(x > 0, jnp.sin, lambda a: a * a, x))
    assert (
        jaxpr_text(fun, np.float32(1.5))
        == """\
{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    _:f32[] d:f32[] e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = mul f f in (g, f, 0.0:f32[]) }
        { lambda ; h:f32[]. let
            i:f32[] = sin h
            j:f32[] = cos h
          in (i, 0.0:f32[], j) }
      )
    ] c a
    k:f32[] = cond[
      branches=(
        { lambda ; l:f32[] m:f32[] n:f32[]. let
            o:f32[] = mul l n
            p:f32[] = mul n l
            q:f32[] = add_any o p
          in (q,) }
        { lambda ; r:f32[] s:f32[] t:f32[]. let u:f32[] = mul t s in (u,) }
      )
    ] c d e 1.0:f32[]
  in (k,) }"""
    )


def test_jaxpr_vmap_switch_batched_index():
    """Every branch runs on operands stop_gradient'ed for the members that do not take it."""
    fun = jax.vmap(lambda i, x: lax.switch(i, [lambda a: a + 1.0, jnp.sin, lambda a: a * 2.0], x))
    assert (
        jaxpr_text(fun, np.array([0, 2], i32), np.ones(2, f32))
        == """\
{ lambda ; a:i32[2] b:f32[2]. let
    c:i32[2] = clamp 0:i32[] a 2:i32[]
    d:bool[2] = eq c 0:i32[]
    e:f32[2] = stop_gradient b
    f:f32[2] = select_n d e b
    g:f32[2] = add f 1.0:f32[]
    h:bool[2] = eq c 1:i32[]
    i:f32[2] = stop_gradient b
    j:f32[2] = select_n h i b
    k:f32[2] = sin j
    l:bool[2] = eq c 2:i32[]
    m:f32[2] = stop_gradient b
    n:f32[2] = select_n l m b
    o:f32[2] = mul n 2.0:f32[]
    p:f32[2] = select_n c g k o
  in (p,) }"""
    )


def test_jaxpr_vmap_cond_batched_predicate():
    fun = jax.vmap(lambda p, x: lax.cond(p, lambda a: a + 1.0, lambda a: a - 1.0, x))
    assert (
        jaxpr_text(fun, np.array([True, False]), np.ones((2, 3), f32))
        == """\
{ lambda ; a:bool[2] b:f32[2,3]. let
    c:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:bool[2] = eq c 0:i32[]
    e:f32[2,3] = stop_gradient b
    f:bool[2,3] = broadcast_in_dim[broadcast_dimensions=(0,)] d
    g:f32[2,3] = select_n f e b
    h:f32[2,3] = sub g 1.0:f32[]
    i:bool[2] = eq c 1:i32[]
    j:f32[2,3] = stop_gradient b
    k:bool[2,3] = broadcast_in_dim[broadcast_dimensions=(0,)] i
    l:f32[2,3] = select_n k j b
    m:f32[2,3] = add l 1.0:f32[]
    n:i32[2,3] = broadcast_in_dim[broadcast_dimensions=(0,)] c
    o:f32[2,3] = select_n n h m
  in (o,) }"""
    )


def test_jaxpr_cond_shared_closure_passed_once():
    fun = lambda p, x, w: lax.cond(p, lambda a: a * w, lambda a: a + w, x)
    assert (
        jaxpr_text(fun, True, np.float32(1), np.float32(2))
        == """\
{ lambda ; a:bool[] b:f32[] c:f32[]. let
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[] g:f32[]. let h:f32[] = add g f in (h,) }
        { lambda ; i:f32[] j:f32[]. let k:f32[] = mul j i in (k,) }
      )
    ] d c b
  in (e,) }"""
    )


# --- while_loop and fori_loop ---------------------------------------------------------------------


def test_jaxpr_while():
    fun = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
    assert (
        jaxpr_text(fun, np.float32(1.5))
        == """\
{ lambda ; a:f32[]. let
    b:f32[] = while[
      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }
      cond_nconsts=0
    ] a
  in (b,) }"""
    )


def test_jaxpr_fori_static_is_scan():
    fun = lambda x: lax.fori_loop(0, 5, lambda i, c: c * 2.0, x)
    assert (
        jaxpr_text(fun, np.float32(1.5))
        == """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d 2.0:f32[]
        in (e, f) }
      length=5
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }"""
    )


def test_jaxpr_fori_dynamic_is_while():
    fun = lambda n, x: lax.fori_loop(0, n, lambda i, c: c * 2.0, x)
    assert (
        jaxpr_text(fun, np.int32(5), np.float32(1.5))
        == """\
{ lambda ; a:i32[] b:f32[]. let
    _:i32[] _:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[]. let
          g:i32[] = add d 1:i32[]
          h:f32[] = mul f 2.0:f32[]
        in (g, e, h) }
      body_nconsts=0
      cond_jaxpr={ lambda ; i:i32[] j:i32[] k:f32[]. let
          l:bool[] = lt i j
        in (l,) }
      cond_nconsts=0
    ] 0:i32[] a b
  in (c,) }"""
    )


def test_jaxpr_grad_of_fori():
    fun = jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * c, x))
    assert (
        jaxpr_text(fun, np.float32(1.5))
        == """\
{ lambda ; a:f32[]. let
    _:i32[] _:f32[] b:f32[3] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d d
        in (e, f, d) }
      length=3
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
    g:f32[] = scan[
      jaxpr={ lambda ; h:f32[] i:f32[]. let
          j:f32[] = mul i h
          k:f32[] = mul h i
          l:f32[] = add_any j k
        in (l,) }
      length=3
      num_carry=1
      num_consts=0
      reverse=True
      unroll=1
    ] 1.0:f32[] b
  in (g,) }"""
    )


def test_jaxpr_vmap_while_batched_predicate():
    """Deliberately not JAX's printout: JAX keeps the batched predicate (`cond_jaxpr` returns
    bool[2], the body is unchanged) and resolves it when lowering; ours makes it explicit in
    the jaxpr: the predicate reduces with reduce_or, the body selects per member (re-reading
    the predicate's constants, passed twice)."""
    fun = jax.vmap(lambda n: lax.while_loop(lambda c: c < n, lambda c: c * 2.0, 1.0))
    assert (
        jaxpr_text(fun, np.ones(2, f32))
        == """\
{ lambda ; a:f32[2]. let
    b:f32[2] = broadcast_in_dim 1.0:f32[]
    c:f32[2] = while[
      body_jaxpr={ lambda ; d:f32[2] e:f32[2]. let
          f:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] e
          g:bool[2] = lt f d
          h:f32[2] = mul e 2.0:f32[]
          i:f32[2] = select_n g e h
        in (i,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; j:f32[2] k:f32[2]. let
          l:f32[2] = convert_element_type[new_dtype=float32 weak_type=False] k
          m:bool[2] = lt l j
          n:bool[] = reduce_or[axes=(0,)] m
        in (n,) }
      cond_nconsts=1
    ] a a b
  in (c,) }"""
    )


def test_jaxpr_while_with_consts():
    def fun(x, n):
        return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, x))

    assert (
        jaxpr_text(fun, np.float32(1), np.int32(3))
        == """\
{ lambda ; a:f32[] b:i32[]. let
    c:i32[] d:f32[] = while[
      body_jaxpr={ lambda ; e:f32[] f:i32[] g:f32[]. let
          h:i32[] = add f 1:i32[]
          i:f32[] = mul g e
        in (h, i) }
      body_nconsts=1
      cond_jaxpr={ lambda ; j:i32[] k:i32[] l:f32[]. let
          m:i32[] = convert_element_type[new_dtype=int32 weak_type=False] k
          n:bool[] = lt m j
        in (n,) }
      cond_nconsts=1
    ] b a 0:i32[] a
  in (c, d) }"""
    )


# --- scan -----------------------------------------------------------------------------------------


def test_jaxpr_scan():
    fun = lambda c, xs: lax.scan(lambda c, x: (c + x, c * x), c, xs)
    assert (
        jaxpr_text(fun, np.float32(1.5), np.arange(5, dtype=f32))
        == """\
{ lambda ; a:f32[] b:f32[5]. let
    c:f32[] d:f32[5] = scan[
      jaxpr={ lambda ; e:f32[] f:f32[]. let
          g:f32[] = add e f
          h:f32[] = mul e f
        in (g, h) }
      length=5
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a b
  in (c, d) }"""
    )


def test_jaxpr_grad_of_scan():
    fun = jax.grad(lambda c, xs: lax.scan(lambda c, x: (jnp.sin(c) * x, None), c, xs)[0])
    assert (
        jaxpr_text(fun, np.float32(1.5), np.arange(5, dtype=f32))
        == """\
{ lambda ; a:f32[] b:f32[5]. let
    _:f32[] c:f32[5] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = cos d
          h:f32[] = mul f e
        in (h, g) }
      length=5
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a b
    i:f32[] = scan[
      jaxpr={ lambda ; j:f32[] k:f32[] l:f32[]. let
          m:f32[] = mul j l
          n:f32[] = mul m k
        in (n,) }
      length=5
      num_carry=1
      num_consts=0
      reverse=True
      unroll=1
    ] 1.0:f32[] c b
  in (i,) }"""
    )


def test_jaxpr_scan_consts_reverse():
    w = np.ones(3, f32)

    def fun(c, xs, w):
        return lax.scan(lambda c, x: (c * w + x, c), c, xs, reverse=True)

    assert (
        jaxpr_text(fun, w, np.ones((2, 3), f32), w)
        == """\
{ lambda ; a:f32[3] b:f32[2,3] c:f32[3]. let
    d:f32[3] e:f32[2,3] = scan[
      jaxpr={ lambda ; f:f32[3] g:f32[3] h:f32[3]. let
          i:f32[3] = mul g f
          j:f32[3] = add i h
        in (j, g) }
      length=2
      num_carry=1
      num_consts=1
      reverse=True
      unroll=1
    ] c a b
  in (d, e) }"""
    )


_W3 = np.ones(3, f32)


def test_jaxpr_scan_closing_over_numpy_array():
    """The closed-over array becomes a constvar of the outer jaxpr, a const of the scan."""

    def fun(c, xs):
        return lax.scan(lambda c, x: (c * _W3 + x, None), c, xs)

    assert (
        jaxpr_text(fun, _W3, np.ones((2, 3), f32))
        == """\
{ lambda a:f32[3]; b:f32[3] c:f32[2,3]. let
    d:f32[3] = scan[
      jaxpr={ lambda ; e:f32[3] f:f32[3] g:f32[3]. let
          h:f32[3] = mul f e
          i:f32[3] = add h g
        in (i,) }
      length=2
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] a b c
  in (d,) }"""
    )


_XS5 = np.arange(5, dtype=f32)


def test_jaxpr_scan_unroll_and_weak_initial_carry():
    """A weakly typed Python-float carry stays weak at the input; the body converts it."""
    body = """\
{ lambda ; a:f32[5]. let
    b:f32[] = scan[
      jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          f:f32[] = add e d
        in (f,) }
      length=5
      num_carry=1
      num_consts=0
      reverse=False
      unroll=UNROLL
    ] 0.0:f32[] a
  in (b,) }"""
    for unroll, printed in ((2, "2"), (True, "5")):
        fun = lambda xs, u=unroll: lax.scan(lambda c, x: (c + x, None), 0.0, xs, unroll=u)[0]
        assert jaxpr_text(fun, _XS5) == body.replace("UNROLL", printed)


def test_jaxpr_fori_unroll():
    fun = lambda x: lax.fori_loop(0, 4, lambda i, c: c + i, x, unroll=2)
    # a Python float argument is weakly typed, so the index converts to a weak f32
    assert (
        jaxpr_text(fun, 1.0)
        == """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=True] c
          g:f32[] = add d f
        in (e, g) }
      length=4
      num_carry=2
      num_consts=0
      reverse=False
      unroll=2
    ] 0:i32[] a
  in (b,) }"""
    )


def test_jaxpr_map():
    assert (
        jaxpr_text(lambda xs: lax.map(lambda x: x * 2, xs), _XS5)
        == """\
{ lambda ; a:f32[5]. let
    b:f32[5] = scan[
      jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      length=5
      num_carry=0
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b,) }"""
    )
