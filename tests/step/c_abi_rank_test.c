/* nsel_init_worker_rank() from C: the rank the caller gives decides NSEL_PROFILE_RANKS and wins
 * over RANK; a matched worker whose rank is unknown is not selected; several windows are stepped
 * through in order. Exit code 0 means every check held. */
#include <stdio.h>
#include <stdlib.h>

#include "nsel/nsel.h"

static int failures = 0;

static void check(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "c_abi_rank_test: failed: %s\n", what);
    ++failures;
  }
}

int main(void) {
  unsetenv("RANK");
  unsetenv("SLURM_PROCID");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("PMI_RANK");
  unsetenv("PMIX_RANK");
  unsetenv("MV2_COMM_WORLD_RANK");
  setenv("NRL_NSYS_WORKER_PATTERNS", "*policy*", 1);
  setenv("NRL_NSYS_PROFILE_STEP_RANGE", "2:3,4:5", 1);
  setenv("NSEL_CAPTURE", "none", 1);
  setenv("NSEL_PROFILE_RANKS", "1-2", 1);
  check(nsel_init_worker_rank("dtensor_policy_worker", -1, -1) == 0, "unknown rank gives 0");
  setenv("NSEL_PROFILE_RANKS", "x", 1);
  check(nsel_init_worker_rank("dtensor_policy_worker", 1, -1) == -1, "bad filter gives -1");
  setenv("NSEL_PROFILE_RANKS", "1-2", 1);
  setenv("RANK", "1", 1);
  check(nsel_init_worker_rank("dtensor_policy_worker", 7, -1) == 0, "given rank 7 wins over RANK");
  check(nsel_step_control_active_ == 0, "an unselected rank stays inactive");
  check(nsel_init_worker_rank("vllm_generation_worker", 1, -1) == 0, "unmatched worker gives 0");
  check(nsel_init_worker_rank("dtensor_policy_worker", 2, -1) == 1, "rank 2 is selected");
  check(nsel_step_control_active_ == 1, "a selected rank is active");
  nsel_step(1);
  check(nsel_capturing() == 0, "step 1 is before the first window");
  nsel_step(2);
  check(nsel_capturing() == 1, "step 2 opens the first window");
  nsel_step(3);
  check(nsel_capturing() == 0, "step 3 closes it");
  check(nsel_step_control_active_ == 1, "still active: a window is left");
  nsel_step(4);
  check(nsel_capturing() == 1, "step 4 opens the second window");
  nsel_step(5);
  check(nsel_capturing() == 0, "step 5 closes it");
  check(nsel_step_control_active_ == 0, "inactive after the last window");
  return failures == 0 ? 0 : 1;
}
