// strata.h: every public capability in one include. Apps write `#include <strata/strata.h>`; the
// headers below, and those they reach, are what `meson install` puts under include/strata/
// (scripts/public-headers). By layer:
//   core         tensors, dtypes, the dispatcher and its trace, inference mode, threads, warnings,
//                the interposer (dispatch modes, tensor subclasses, function modes)
//   ops          the ops' front ends, detach, custom ops (Library), record_function scopes
//   autograd     backward and grad, grad mode, hooks, graph callbacks, custom functions, gradcheck
//   nn, optim    modules, functional, init, module hooks and ModTracker, safetensors; SGD
//   distributed  process groups, the thread backend (spawn), the fake process group, functional
//                and differentiable collectives (funcol, AsyncCollectiveTensor), DistributedDataParallel,
//                device meshes, placements, redistribution, DTensor
//   modes        DebugMode, FakeTensorMode, FlopCounterMode, OpCounter, the profiler, LoggingTensor,
//                ScaledTensor
//   tracer       program traces (record_program), the autograd graph as DOT
// Not here: the MPI backend (<strata/distributed/mpi_backend.h>, in libstrata_mpi so that apps
// without it never link MPI) and the strata-trace app (tracer/cli/, never installed).
#pragma once

#include "autograd/backward.h"
#include "autograd/custom_function.h"
#include "autograd/grad.h"
#include "autograd/grad_mode.h"
#include "autograd/gradcheck.h"
#include "autograd/graph.h"
#include "autograd/hooks.h"
#include "autograd/variable.h"
#include "core/dispatch/dispatch_trace.h"
#include "core/dispatch/dispatcher.h"
#include "core/generator.h"
#include "core/inference_mode.h"
#include "core/interpose/function_mode.h"
#include "core/interpose/interposer.h"
#include "core/interpose/subclass.h"
#include "core/parallel.h"
#include "core/tensor.h"
#include "core/tensor_format.h"
#include "core/util/warning.h"
#include "distributed/async_collective_tensor.h"
#include "distributed/autograd_collectives.h"
#include "distributed/data_parallel.h"
#include "distributed/device_mesh.h"
#include "distributed/dtensor.h"
#include "distributed/fake_process_group.h"
#include "distributed/funcol.h"
#include "distributed/functional_collectives.h"
#include "distributed/placement.h"
#include "distributed/process_group.h"
#include "distributed/redistribute.h"
#include "distributed/redistribute_cost.h"
#include "distributed/shard_dim_alltoall.h"
#include "distributed/shard_layout.h"
#include "distributed/sharding_propagation.h"
#include "distributed/tensor_parallel.h"
#include "distributed/thread_backend.h"
#include "modes/debug_hashes.h"
#include "modes/debug_mode.h"
#include "modes/fake_tensor.h"
#include "modes/flop_counter.h"
#include "modes/logging_tensor.h"
#include "modes/op_counter.h"
#include "modes/profiler.h"
#include "modes/scaled_tensor.h"
#include "nn/functional.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/mod_tracker.h"
#include "nn/module_hooks.h"
#include "nn/safetensors.h"
#include "ops/detach.h"
#include "ops/einsum.h"
#include "ops/functions.h"
#include "ops/indexing.h"
#include "ops/library.h"
#include "ops/record_function.h"
#include "optim/sgd.h"
#include "tracer/autograd_dot.h"
#include "tracer/explorer.h"
#include "tracer/program_trace.h"
#include "tracer/trace_recorder.h"
