/* A stand-in, named as such, for Nsight Systems' NVTX injection once nsys has ended: its
 * nvtxRangeEnd never returns (what 2023.4's libToolsInjection64 was caught doing after a
 * scancel, stack taken with gdb). Real nsys cannot be made to reach that state on demand.
 * Loaded through NVTX_INJECTION64_PATH, as nsys loads its own. When NSEL_TEST_RANGE_END_MARK names
 * a file, nvtxRangeEnd creates it first, so a test can tell the hang was reached. */
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <stdlib.h>
#include <unistd.h>

static nvtxRangeId_t NVTX_API start_range(const char* message) {
  (void)message;
  return 1;
}

static void NVTX_API end_range_never(nvtxRangeId_t id) {
  (void)id;
  const char* mark = getenv("NSEL_TEST_RANGE_END_MARK");
  if (mark != NULL) close(open(mark, O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  for (;;) pause();
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  const NvtxExportTableCallbacks* callbacks =
      (const NvtxExportTableCallbacks*)get_export_table(NVTX_ETID_CALLBACKS);
  NvtxFunctionTable core = NULL;
  unsigned int size = 0;
  if (callbacks == NULL || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &size) ||
      size <= NVTX_CBID_CORE_RangeEnd) {
    return 0;
  }
  *core[NVTX_CBID_CORE_RangeStartA] = (NvtxFunctionPointer)start_range;
  *core[NVTX_CBID_CORE_RangeEnd] = (NvtxFunctionPointer)end_range_never;
  return 1;
}
