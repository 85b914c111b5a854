// strata.h: everything an application uses, in one include: tensors and the dispatcher (core), the
// ops (ops), autograd, nn, optim, the interposer for dispatch modes and tensor subclasses, and the
// extension points (custom autograd functions, custom ops).
// The tracer library (OpCounter, LoggingTensor, the seed experiment) has its own headers in tracer/.
#pragma once

#include "autograd/backward.h"
#include "autograd/custom_function.h"
#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/dispatch/dispatcher.h"
#include "core/interpose/function_mode.h"
#include "core/generator.h"
#include "core/inference_mode.h"
#include "core/interpose/interposer.h"
#include "core/parallel.h"
#include "core/interpose/subclass.h"
#include "core/tensor.h"
#include "core/tensor_format.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/mod_tracker.h"
#include "nn/module_hooks.h"
#include "nn/safetensors.h"
#include "ops/detach.h"
#include "ops/functions.h"
#include "ops/library.h"
#include "ops/record_function.h"
#include "optim/sgd.h"
