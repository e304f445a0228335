/*
 * kcall/builtin.h — kcall's own ops: registered through the same op and
 * kernel builders a plugin uses (kcall/op.h, kcall/kernel.h), so they are
 * called, differentiated and batched as any op is: kc_op_call in C,
 * kcall.ops.kc.NAME in Python (which registers them on import),
 * kcall.torch, kcall.jax, and programs (custom calls "kcall.kc.NAME").
 *
 * Names start with "kc." so that they never take a plugin's name. Every
 * op takes f32 and f64 (the type attr T) and f16 and bf16 (widened to f32
 * exactly, computed in f32, each output rounded once to nearest even, as
 * PyTorch computes half ops on the CPU), declares its gradient (another
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
 *   kc.Neg, kc.Exp, kc.Log, kc.Tanh, kc.Sigmoid, kc.Relu, kc.Softplus,
 *   kc.Gelu (x) -> y                Gelu the exact (erf) form
 *   kc.Sum, kc.Mean, kc.Max (x) -> y
 *                                   over attr `axes` (list(int), negative
 *                                   from the end), attr keepdims; Max's
 *                                   gradient shared among tied maxima
 *   kc.Softmax, kc.LogSoftmax (x) -> y
 *                                   along attr `axis` (int, default -1)
 *   kc.LayerNorm(x, scale, bias) -> y, kc.RMSNorm(x, scale) -> y
 *                                   over x's dims from attr `begin_axis`
 *                                   (default -1), which are scale's and
 *                                   bias's shape; attr `epsilon` (float,
 *                                   1e-5 and 1e-6)
 *   kc.Embedding(table, indices) -> y
 *                                   table [rows, dim], indices i32 or i64
 *                                   (attr Tidx) of any shape; y indices'
 *                                   shape plus [dim]; gradient a
 *                                   scatter-add, the same on any number of
 *                                   threads
 *   kc.CrossEntropy(logits, labels) -> loss
 *                                   logits [..., classes], labels [...]
 *                                   (i32 or i64); attr `reduction` 'mean'
 *                                   (default), 'sum' or 'none'
 *   kc.Conv2D(x, w) -> y            attr data_format 'NHWC' (default: x
 *                                   [N, H, W, C], w [kh, kw, C / groups,
 *                                   O] as TensorFlow and JAX) or 'NCHW'
 *                                   (w [O, C / groups, kh, kw] as
 *                                   PyTorch); attrs strides, dilations
 *                                   ((h, w) or one for both), padding (one
 *                                   for all sides, (h, w), or (top,
 *                                   bottom, left, right)), groups; y [N,
 *                                   OH, OW, O] or [N, O, OH, OW]
 *   kc.MaxPool, kc.AvgPool(x) -> y  windows of attr ksize, strides (default
 *                                   ksize) and padding as Conv2D's;
 *                                   AvgPool's count_include_pad (default
 *                                   true, as PyTorch); MaxPool's gradient
 *                                   goes to the first largest element
 *
 * An index or label outside its range is OUT_OF_RANGE naming its position
 * and value; nothing is written. And the ops their gradients and tangents
 * name: kc.MatMulGrad, kc.MatMulJvp, kc.<binary>Grad, kc.MulJvp, kc.DivJvp,
 * kc.MaximumJvp, kc.MinimumJvp, kc.TanhGrad, kc.SigmoidGrad, kc.ReluGrad,
 * kc.SoftplusGrad, kc.GeluGrad, kc.SumGrad, kc.MeanGrad, kc.MaxGrad,
 * kc.MaxJvp, kc.SoftmaxGrad (also Softmax's tangent), kc.LogSoftmaxGrad,
 * kc.LogSoftmaxJvp, kc.LayerNormGrad, kc.LayerNormJvp, kc.RMSNormGrad,
 * kc.RMSNormJvp, kc.EmbeddingGrad, kc.CrossEntropyGrad, kc.CrossEntropyJvp,
 * kc.Conv2DGrad (dx and dw; kc_needed skips either), kc.Conv2DJvp,
 * kc.MaxPoolGrad (given x, MaxPool's output and dy; a y that is not
 * MaxPool(x) is refused, INVALID_ARGUMENT), kc.MaxPoolJvp,
 * kc.AvgPoolGrad (AvgPool is its own tangent); each checks its
 * cotangents and tangents against the shapes of the primals
 * (INVALID_ARGUMENT naming the input). Second derivatives go through
 * kc.Add, kc.Sub (AddGrad and SubGrad are linear) and through the unary
 * ops whose gradient is another forward op (Neg, Exp, Log) and through
 * kc.EmbeddingGrad (linear); the other gradient ops declare none yet.
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
