// Uses a few public APIs of the installed nsel: a step window, a worker pattern, and the C ABI
// (which must stay inactive without `nsel exec`).
#include <nsel/nsel.h>

#include <iostream>

#include "nsel/core/pattern.hpp"
#include "nsel/core/step_window.hpp"

int main() {
  const nsel::StepWindow window = nsel::parse_step_window("2:4");
  std::cout << "window " << window.text() << " holds step 3: " << window.contains(3) << "\n";
  std::cout << "*policy* matches dtensor_policy_worker: "
            << nsel::fnmatch_case("*policy*", "dtensor_policy_worker") << "\n";
  nsel_step(3);
  std::cout << "capturing without nsel exec: " << nsel_capturing() << "\n";
  return 0;
}
