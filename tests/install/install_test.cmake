# `cmake --install` of this build into a fresh prefix, then tests/install/consumer configured and
# built against that prefix alone (find_package(nsel)), run, and its output compared.
#   cmake -DBUILD_DIR=... -DCONSUMER_DIR=... -DWORK_DIR=... -DGENERATOR=... -DCXX_COMPILER=...
#         -DC_COMPILER=... -P install_test.cmake
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "${what} failed (${code}):\n${out}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
step("cmake --install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
step("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_DIR} -B ${WORK_DIR}/build
  -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_C_COMPILER=${C_COMPILER})
step("building the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/build)

execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=NRL_NSYS_WORKER_PATTERNS
  ${WORK_DIR}/build/app RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(expected "window 2:4 holds step 3: 1
*policy* matches dtensor_policy_worker: 1
capturing without nsel exec: 0
")
if(NOT code EQUAL 0 OR NOT out STREQUAL expected OR NOT err STREQUAL "")
  message(FATAL_ERROR "the consumer said (exit ${code}):\n${out}${err}\nexpected:\n${expected}")
endif()
file(REMOVE_RECURSE ${WORK_DIR})
