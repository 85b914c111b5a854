// core/device.h: where a tensor's data lives. `meta` tensors have shapes and dtypes but no data;
// ops on them run only their meta functions (shape inference), as PyTorch's meta device does.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace strata {

enum class Device : std::uint8_t { CPU, Meta };

inline std::string_view device_name(Device d) { return d == Device::CPU ? "cpu" : "meta"; }
inline std::ostream& operator<<(std::ostream& out, Device d) { return out << device_name(d); }

}  // namespace strata
