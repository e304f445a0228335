/*
 * kcall/kcall.h — the umbrella header: everything a host program uses.
 * A plugin needs only kcall/abi.h.
 */
#ifndef KCALL_KCALL_H_
#define KCALL_KCALL_H_

#include "kcall/abi.h"
#include "kcall/base.h"
#include "kcall/func.h"
#include "kcall/plugin.h"
#include "kcall/tensor.h"
#include "kcall/value.h"
#include "kcall/version.h"

#endif /* KCALL_KCALL_H_ */
