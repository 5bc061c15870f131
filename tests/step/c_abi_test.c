/* The C ABI compiles as C and behaves as documented: inactive by default, nsel_init_worker()
 * selects by the contract's variables. Exit code 0 means every check held. */
#include <stdio.h>
#include <stdlib.h>

#include "nsel/nsel.h"

static int failures = 0;

static void check(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "c_abi_test: failed: %s\n", what);
    ++failures;
  }
}

int main(void) {
  check(nsel_step_control_active_ == 0, "inactive without nsel exec");
  nsel_step(1);
  check(nsel_capturing() == 0, "no capture when inactive");

  setenv("NRL_NSYS_WORKER_PATTERNS", "*policy*", 1);
  setenv("NRL_NSYS_PROFILE_STEP_RANGE", "0:3", 1);
  check(nsel_init_worker("dtensor_policy_worker") == -1, "bad settings give -1");

  setenv("NRL_NSYS_PROFILE_STEP_RANGE", "2:4", 1);
  setenv("NSEL_CAPTURE", "none", 1);
  check(nsel_init_worker("vllm_generation_worker") == 0, "unmatched worker gives 0");
  check(nsel_step_control_active_ == 0, "unmatched worker stays inactive");
  check(nsel_init_worker("dtensor_policy_worker") == 1, "matched worker gives 1");
  check(nsel_step_control_active_ == 1, "matched worker is active");
  nsel_step(1);
  check(nsel_capturing() == 0, "step 1 is before the window");
  nsel_step(2);
  check(nsel_capturing() == 1, "step 2 opens the window");
  nsel_step(3);
  check(nsel_capturing() == 1, "step 3 is inside");
  nsel_step(4);
  check(nsel_capturing() == 0, "step 4 closes the window");
  /* NeMo RL's rule: a step that comes back inside the window opens it again. */
  check(nsel_step_control_active_ == 1, "one window stays looked at after it closed");
  nsel_step(3);
  check(nsel_capturing() == 1, "step 3 again reopens the window");
  nsel_finish();
  check(nsel_capturing() == 0, "finish closes the window");
  check(nsel_step_control_active_ == 0, "inactive after finish");
  return failures == 0 ? 0 : 1;
}
