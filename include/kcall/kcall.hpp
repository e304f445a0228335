/*
 * kcall/kcall.hpp — a header-only C++17 layer over packed functions and the
 * op, kernel and thread-pool C API (the seed's "C++ header-only API" and
 * its typed packed functions, set_body_typed).
 *
 * It calls the library only through a kc_host_api table, so it works in a
 * plugin (which sees nothing else) and in a host program alike:
 *
 *   plugin:  kc_status* init(const kc_host_api* host) {
 *              kcall::set_host(host);
 *              return kcall::guard([] { ... register ops and kernels ... });
 *            }
 *   host:    kcall::set_host(kc_plugin_get_host_api());
 *
 * Nothing here crosses the ABI: C++ objects live on one side of it, and
 * everything that reaches the library is the C API's (function pointers,
 * kc_closure and packed functions with their deleters, kc_any, kc_status).
 * Exceptions never cross the boundary either: every callback the layer
 * installs catches them and turns them into a kc_status (kcall::Error keeps
 * the code and the status it came from).
 *
 * Thread safety is the C API's: Tensor, Attrs and the contexts are views,
 * valid as long as what they view (a callback's duration); Any, Function
 * and TensorObject own references, which may be copied between threads.
 */
#ifndef KCALL_KCALL_HPP_
#define KCALL_KCALL_HPP_

/* The layer is one header per concept under kcall/cpp/; this one includes
 * them all. */
#include "kcall/cpp/host.hpp"
#include "kcall/cpp/tensor.hpp"
#include "kcall/cpp/value.hpp"
#include "kcall/cpp/function.hpp"
#include "kcall/cpp/attrs.hpp"
#include "kcall/cpp/thread_pool.hpp"
#include "kcall/cpp/shape.hpp"
#include "kcall/cpp/kernel.hpp"
#include "kcall/cpp/register.hpp"

#endif /* KCALL_KCALL_HPP_ */
