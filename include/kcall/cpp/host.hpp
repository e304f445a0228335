/*
 * kcall/cpp/host.hpp — the host table the layer calls through, and errors:
 * kcall::Error, check, guard. Part of the C++ layer: kcall/kcall.hpp
 * includes every part and says how the layer works (the host table,
 * ownership, threads).
 */
#ifndef KCALL_CPP_HOST_HPP_
#define KCALL_CPP_HOST_HPP_

#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "kcall/abi.h"

namespace kcall {

/* ---- the host table ------------------------------------------------------ */

namespace detail {
inline const kc_host_api*& host_slot() {
  static const kc_host_api* table = nullptr;
  return table;
}
}  // namespace detail

/* Sets the table the layer calls through: once, before anything else (a
 * plugin's init, or a host program's main). One table per shared object. */
inline void set_host(const kc_host_api* host) { detail::host_slot() = host; }

/* The table. set_host must have been called. */
inline const kc_host_api& host() { return *detail::host_slot(); }

/* ---- errors ----------------------------------------------------------------
 */

/* A failed call: the code, the message, and the kc_status it came from (its
 * context chain included), which release() hands back to C. */
class Error : public std::exception {
 public:
  Error(kc_status_code code, std::string message)
      : state_(std::make_shared<State>(code, std::move(message), nullptr)) {}

  /* Takes ownership of `status` (non-NULL). */
  explicit Error(kc_status* status)
      : state_(std::make_shared<State>(host().status_get_code(status),
                                       host().status_get_message(status),
                                       status)) {}

  kc_status_code code() const noexcept { return state_->code; }
  const char* what() const noexcept override { return state_->message.c_str(); }

  /* A kc_status for C (owned by the caller): the original one the first
   * time, a new one with the same code and message after that. */
  kc_status* release() const {
    kc_status* st = state_->status;
    state_->status = nullptr;
    return st ? st
              : host().status_create(state_->code, "%s",
                                     state_->message.c_str());
  }

 private:
  struct State {
    State(kc_status_code c, std::string m, kc_status* s)
        : code(c), message(std::move(m)), status(s) {}
    ~State() {
      if (status) host().status_destroy(status);
    }
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    kc_status_code code;
    std::string message;
    kc_status* status;
  };
  std::shared_ptr<State> state_; /* copies of an exception share it */
};

/* Throws Error for a failed call; nothing for NULL. */
inline void check(kc_status* status) {
  if (status) throw Error(status);
}

/* The kc_status for the exception being handled; call it only inside a
 * catch block. kcall::Error keeps its code and status; std::bad_alloc is
 * RESOURCE_EXHAUSTED; std::invalid_argument and std::out_of_range are
 * INVALID_ARGUMENT and OUT_OF_RANGE with their what(); any other exception
 * is INTERNAL ("C++ exception: what()"). */
inline kc_status* status_from_current_exception() noexcept {
  try {
    throw;
  } catch (const Error& e) {
    return e.release();
  } catch (const std::bad_alloc&) {
    return host().status_create(KC_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::invalid_argument& e) {
    return host().status_create(KC_INVALID_ARGUMENT, "%s", e.what());
  } catch (const std::out_of_range& e) {
    return host().status_create(KC_OUT_OF_RANGE, "%s", e.what());
  } catch (const std::exception& e) {
    return host().status_create(KC_INTERNAL, "C++ exception: %s", e.what());
  } catch (...) {
    return host().status_create(KC_INTERNAL, "unknown C++ exception");
  }
}

/* Runs f, turning any exception into a kc_status (as
 * status_from_current_exception does): for the bodies of C callbacks and
 * plugin inits. */
template <class F>
kc_status* guard(F&& f) noexcept {
  try {
    std::forward<F>(f)();
    return nullptr;
  } catch (...) {
    return status_from_current_exception();
  }
}

}  // namespace kcall

#endif /* KCALL_CPP_HOST_HPP_ */
