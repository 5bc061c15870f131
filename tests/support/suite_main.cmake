# Runs the probe of suite_main.cpp three ways: only skipped cases must exit 77 (CTest's Skipped),
# a skip beside a pass 0, and a failure 1.
function(expect filter extra code)
  execute_process(COMMAND ${PROBE} --gtest_filter=${filter} ${extra}
                  RESULT_VARIABLE result OUTPUT_QUIET ERROR_QUIET)
  if(NOT result EQUAL code)
    message(FATAL_ERROR "--gtest_filter=${filter}: exit ${result}, expected ${code}")
  endif()
endfunction()
expect("Probe.Skips" "" 77)
expect("Probe.Skips:Probe.Passes" "" 0)
expect("Probe.*Fails:Probe.Skips" "--gtest_also_run_disabled_tests" 1)
