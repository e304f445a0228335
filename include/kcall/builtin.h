/*
 * kcall/builtin.h — kcall's own ops: registered through the same op and
 * kernel builders a plugin uses (kcall/op.h, kcall/kernel.h), so they are
 * called, differentiated and batched as any op is: kc_op_call in C,
 * kcall.ops.kc.NAME in Python (which registers them on import),
 * kcall.torch, kcall.jax, and programs (custom calls "kcall.kc.NAME").
 *
 * Names start with "kc." so that they never take a plugin's name. Every
 * op takes f32 and f64 (the type attr T), declares its gradient (another
 * built-in op) and its forward-mode rule, and computes its shapes with
 * kcall's helpers, so frameworks get them on symbolic dims:
 *
 *   kc.MatMul(a, b) -> product      [..., M, K] x [..., K, N] -> [..., M, N],
 *                                   batch dims broadcast; attrs
 *                                   transpose_a, transpose_b (bool);
 *                                   f32 on kcall's blocked GEMM
 *   kc.Add, kc.Sub, kc.Mul, kc.Div, kc.Maximum, kc.Minimum (x, y) -> z
 *                                   NumPy broadcasting; maximum and minimum
 *                                   propagate NaN
 *   kc.Neg, kc.Exp, kc.Log, kc.Tanh, kc.Sigmoid, kc.Relu, kc.Softplus
 *                     (x) -> y
 *   kc.Sum, kc.Mean (x) -> y        over attr `axes` (list(int), negative
 *                                   from the end), attr keepdims
 *
 * and the ops their gradients and tangents name: kc.MatMulGrad,
 * kc.MatMulJvp, kc.<binary>Grad, kc.MulJvp, kc.DivJvp, kc.MaximumJvp,
 * kc.MinimumJvp, kc.TanhGrad, kc.SigmoidGrad, kc.ReluGrad,
 * kc.SoftplusGrad, kc.SumGrad, kc.MeanGrad; each checks its cotangents
 * and tangents against the shapes of the primals (INVALID_ARGUMENT naming
 * the input). Second derivatives go through kc.Add, kc.Sub (AddGrad and
 * SubGrad are linear) and through the unary ops whose gradient is another
 * forward op (Neg, Exp, Log); the other gradient ops declare none yet.
 * `kcall ops` lists them with their specs (`kcall ops kc.MatMul`, one).
 */
#ifndef KCALL_BUILTIN_H_
#define KCALL_BUILTIN_H_

#include "kcall/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Registers every built-in op and its CPU kernel, all or none: on failure
 * nothing of them stays registered. Idempotent and thread-safe: once they
 * are registered (since the last kc_op_registry_reset) it does nothing.
 * Called in a plugin's init, they are staged with the plugin's own ops.
 * RESOURCE_EXHAUSTED; ALREADY_EXISTS when another registration took a
 * "kc." name. */
KC_API kc_status* kc_builtin_ops_register(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KCALL_BUILTIN_H_ */
