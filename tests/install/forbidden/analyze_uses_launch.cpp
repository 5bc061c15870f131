// Must not compile: the analyze room may not use the launch room, so its include view has no
// nsel/launch/ (tests/install/forbidden_include.cmake checks the compiler says so).
#include "nsel/launch/supervisor.hpp"
