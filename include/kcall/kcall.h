/*
 * kcall/kcall.h — the umbrella header: everything a host program uses.
 * A plugin needs only kcall/abi.h.
 */
#ifndef KCALL_KCALL_H_
#define KCALL_KCALL_H_

#include "kcall/abi.h"
#include "kcall/base.h"
#include "kcall/builtin.h"
#include "kcall/device.h"
#include "kcall/func.h"
#include "kcall/kernel.h"
#include "kcall/op.h"
#include "kcall/plugin.h"
#include "kcall/program.h"
#include "kcall/runtime.h"
#include "kcall/tensor.h"
#include "kcall/tvm_ffi.h"
#include "kcall/value.h"
#include "kcall/version.h"
#include "kcall/xcall.h"
#include "kcall/xla_ffi.h"

#endif /* KCALL_KCALL_H_ */
