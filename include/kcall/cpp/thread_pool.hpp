/*
 * kcall/cpp/thread_pool.hpp — kcall::ThreadPool, a handle to a kcall thread
 * pool. Part of the C++ layer: kcall/kcall.hpp includes every part and says
 * how the layer works (the host table, ownership, threads).
 */
#ifndef KCALL_CPP_THREAD_POOL_HPP_
#define KCALL_CPP_THREAD_POOL_HPP_

#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <type_traits>
#include <utility>

#include "kcall/cpp/host.hpp"

namespace kcall {

/* ---- the thread pool
 * --------------------------------------------------------------- */

/* A non-owning handle to a pool (the default pool when NULL). */
class ThreadPool {
 public:
  explicit ThreadPool(kc_thread_pool* pool = nullptr) : p_(pool) {}
  kc_thread_pool* raw() const { return p_; }
  int32_t size() const { return host().thread_pool_get_size(p_); }

  /* f(begin, end) over [0, total); see kc_thread_pool_parallel_for. An
   * exception thrown by f is rethrown here, after every range ran. */
  template <class F>
  void parallel_for(int64_t total, int64_t cost_per_unit, F&& f) const {
    Loop<std::decay_t<F>> loop{std::forward<F>(f)};
    host().thread_pool_parallel_for(p_, total, cost_per_unit,
                                    &Loop<std::decay_t<F>>::range, &loop);
    loop.rethrow();
  }

  /* f(begin, end, worker_id); see kc_thread_pool_parallel_for_with_worker_id.
   */
  template <class F>
  void parallel_for_with_worker_id(int64_t total, int64_t cost_per_unit,
                                   F&& f) const {
    Loop<std::decay_t<F>> loop{std::forward<F>(f)};
    host().thread_pool_parallel_for_with_worker_id(
        p_, total, cost_per_unit, &Loop<std::decay_t<F>>::worker_range, &loop);
    loop.rethrow();
  }

  /* Runs f on a worker, later. The function travels as a kc_closure whose
   * deleter frees it (the seed's FuncWrap). An exception escaping f ends
   * the process, as it would in a std::thread. */
  void schedule(std::function<void()> f) const {
    check(host().thread_pool_schedule(p_, wrap(std::move(f)).get()));
  }
  void schedule_with_hint(std::function<void()> f, int32_t start,
                          int32_t limit) const {
    check(host().thread_pool_schedule_with_hint(p_, wrap(std::move(f)).get(),
                                                start, limit));
  }

 private:
  template <class F>
  struct Loop {
    F f;
    std::once_flag once{};
    std::exception_ptr error{};

    void run(int64_t begin, int64_t end, int32_t id) {
      try {
        if constexpr (std::is_invocable_v<F&, int64_t, int64_t, int32_t>) {
          f(begin, end, id);
        } else {
          f(begin, end);
        }
      } catch (...) {
        auto caught = std::current_exception();
        std::call_once(once, [&] { error = caught; });
      }
    }
    static void range(void* self, int64_t begin, int64_t end) {
      static_cast<Loop*>(self)->run(begin, end, 0);
    }
    static void worker_range(void* self, int64_t begin, int64_t end,
                             int32_t id) {
      static_cast<Loop*>(self)->run(begin, end, id);
    }
    void rethrow() {
      if (error) std::rethrow_exception(error);
    }
  };

  /* A closure owning a heap copy of f; the pool owns it once scheduled. */
  struct Closure {
    kc_closure c;
    const kc_closure* get() const { return &c; }
  };
  static Closure wrap(std::function<void()> f) {
    auto* heap = new std::function<void()>(std::move(f));
    return Closure{kc_closure{
        sizeof(kc_closure),
        [](void* self) noexcept {
          (*static_cast<std::function<void()>*>(self))();
        },
        heap,
        [](void* self) { delete static_cast<std::function<void()>*>(self); }}};
  }

  kc_thread_pool* p_;
};

}  // namespace kcall

#endif /* KCALL_CPP_THREAD_POOL_HPP_ */
