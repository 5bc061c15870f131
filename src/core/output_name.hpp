// nsys's output option (-o) as core spells it for the plan and the option set.
#pragma once

#include <string>
#include <string_view>

namespace nsel {

// `name` as nsys's output option must spell it: nsys expands %p, %h, %q{...} and %%, so a
// literal '%' is doubled.
std::string escape_output_name(std::string_view name);

}  // namespace nsel
