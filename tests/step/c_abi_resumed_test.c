/* NeMo RL's window rule through the C ABI, compiled as C: window 3:7 of a job resumed from a
 * checkpoint at step 4 captures steps 4, 5 and 6; a skipped or repeated step inside keeps the
 * capture open; a jump past the window closes it. Exit code 0 means every check held. */
#include <stdio.h>
#include <stdlib.h>

#include "nsel/nsel.h"

static int failures = 0;

static void check(int condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "c_abi_resumed_test: failed: %s\n", what);
    ++failures;
  }
}

int main(void) {
  setenv("NRL_NSYS_WORKER_PATTERNS", "*policy*", 1);
  setenv("NRL_NSYS_PROFILE_STEP_RANGE", "3:7", 1);
  setenv("NSEL_CAPTURE", "none", 1);
  check(nsel_init_worker("dtensor_policy_worker") == 1, "matched worker gives 1");
  /* Resumed at step 4: steps 1 to 3 never come. */
  nsel_step(4);
  check(nsel_capturing() == 1, "resumed step 4 (inside 3:7) opens the window");
  nsel_step(6);
  check(nsel_capturing() == 1, "skipped step 5: step 6 keeps it open");
  nsel_step(6);
  check(nsel_capturing() == 1, "repeated step 6 keeps it open");
  nsel_step(7);
  check(nsel_capturing() == 0, "step 7, the first outside, closes it");
  nsel_step(7);
  check(nsel_capturing() == 0, "step 7 repeated stays closed");
  nsel_step(5);
  check(nsel_capturing() == 1, "a step back inside reopens it, as NeMo RL does");
  nsel_step(12);
  check(nsel_capturing() == 0, "a jump past the window closes it");
  nsel_step(2);
  check(nsel_capturing() == 0, "a step before the window opens nothing");
  return failures == 0 ? 0 : 1;
}
