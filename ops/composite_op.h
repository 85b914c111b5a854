// ops/composite_op.h: ops registered as PyTorch registers a CompositeImplicitAutograd op (chunk,
// split.sizes, narrow): one kernel, the decomposition, at the Autograd key and at both backends. A
// family's registration function calls `def_composite(d, "aten", schema, kernel)`, which
// scripts/gen-ops finds as it finds `d.def(...)` (docs/ops.md marks the op a composite).
#pragma once

#include <string_view>

#include "../core/dispatch/dispatcher.h"

namespace strata::ops {

// Note [A composite op decomposes at Autograd]
// PyTorch registers a CompositeImplicitAutograd op's decomposition (chunk into split, split.sizes into
// split_with_sizes) at the Autograd keys and at every backend. A call from the top passes Autograd
// (Note [A call from the top passes Autograd], core/dispatch/dispatcher.h) and decomposes there, so
// autograd records the ops it decomposes into and a mode sees those; a call below Autograd (in a
// mode's or a wrapper subclass's handler, whose ops run with Autograd excluded) skips that kernel and
// reaches the interposer as the op itself, `aten::chunk`, and when the handler runs it on, the
// backend's copy decomposes it. So a sharded tensor's redistribution logs
// `aten::chunk(t: f32[1, 96, 8], 4, 2)` while a chunk at the top under DebugMode logs
// `aten::split.Tensor`, as PyTorch's do. Such an op has no derivative row (the ops it runs have
// theirs); is_composite says which ops are composites, for the tables' checks. The other composites
// (reshape, contiguous, linear, layer_norm, einsum, ...) are front-end functions that never reach the dispatcher:
// below Autograd a mode sees the ops they decompose into, where PyTorch's would see the op.

// Registers `schema` in namespace `ns` with `decomposition` at Autograd, CPU and Meta.
OperatorHandle def_composite(Dispatcher& d, std::string_view ns, std::string_view schema, KernelFunction decomposition);
// Whether `op` was registered by def_composite.
bool is_composite(const OperatorHandle& op);

// Registers the composite ops whose kernels are in ops/composites.cpp (narrow); chunk and
// split.sizes are registered with the split ops.
void register_composite_ops(Dispatcher& d);

}  // namespace strata::ops
