// io/python_repr.h: values written as Python's repr() writes them, for DebugMode's log lines
// (`alpha=-0.1`, `# {'hash': 65.34727436304092}`), which upstream makes with str() and repr().
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace strata::tracer {

// repr(float): the shortest text that reads back as `v`; "1e-05", "0.0001", "1e+16", "2.0", "nan", "-inf".
void append_python_float(std::string& out, double v);
std::string python_float_repr(double v);
// str(str): the text itself, with any byte that is not well-formed UTF-8 written as \xNN.
void append_python_str(std::string& out, std::string_view s);
// repr(str): single-quoted unless the text holds a single quote and no double one.
void append_python_str_repr(std::string& out, std::string_view s);
// repr() of a JSON value read as Python data: null -> None, true -> True, an object -> a dict; an array
// is written as a tuple, "(1.5, None)", as an op's several returns are upstream.
std::string python_repr(const nlohmann::ordered_json& v);

}  // namespace strata::tracer
