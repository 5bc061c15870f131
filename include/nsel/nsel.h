/* nsel step control: the C ABI a training loop calls once at the start of each step.
 *
 *   for (long long step = first; step <= steps; ++step) {
 *     nsel_step(step);   // capture opens at the first step inside the window and closes at
 *     ...                // the first step outside it (NeMo RL's rule: a resumed job, whose
 *   }                    // `first` is inside the window, is captured from there on)
 *
 * The process is controlled when `nsel exec` started it under nsys (it sets NSEL_STEP_CAPTURE),
 * or after nsel_init_worker() selected it. Otherwise nsel_step() is one predictable branch.
 * A window still open at exit is closed by an exit handler. */
#ifndef NSEL_NSEL_H
#define NSEL_NSEL_H

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero while steps must be looked at; set at load time and cleared once no window can open
 * again (after the last of several windows closed, or after nsel_finish()).
 * Read through nsel_step(); never write it. */
extern int nsel_step_control_active_;

/* The out-of-line step call, for bindings that cannot inline (ctypes, nanobind). */
void nsel_step_begin(long long step);

/* For processes launched without `nsel exec` (for example by Ray's own nsight field): reads
 * NRL_NSYS_WORKER_PATTERNS and NRL_NSYS_PROFILE_STEP_RANGE and enables step control when
 * `worker` is selected, logging the contract's line. Returns 1 when selected, 0 when not, and
 * -1 when the settings are invalid (a one-line message goes to stderr). */
int nsel_init_worker(const char* worker);

/* The same with this process's rank and node-local rank given by the caller (a driver that
 * knows each actor's rank): they win over RANK, LOCAL_RANK and the other variables for
 * NSEL_PROFILE_RANKS and NSEL_PROFILE_LOCAL_RANKS. A negative value means "look it up". */
int nsel_init_worker_rank(const char* worker, long long rank, long long local_rank);

/* Closes an open capture now (also done automatically at exit). */
void nsel_finish(void);

/* 1 while capture is open, 0 otherwise. */
int nsel_capturing(void);

/* An NVTX range named `name` around a part of a step ("forward", "backward"): push at its start,
 * pop at its end, on the same thread. Summaries show a step's top-level ranges inside it. Costs
 * one call into NVTX, which does nothing when no tool is attached. */
void nsel_range_push(const char* name);
void nsel_range_pop(void);

static inline void nsel_step(long long step) {
  if (__builtin_expect(__atomic_load_n(&nsel_step_control_active_, __ATOMIC_RELAXED), 0)) {
    nsel_step_begin(step);
  }
}

#ifdef __cplusplus
}
#endif

#endif /* NSEL_NSEL_H */
