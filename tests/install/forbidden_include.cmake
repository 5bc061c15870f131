# Builds a target whose source includes a header of a room it may not use, and succeeds only when
# the build fails because that header is not found (not for any other reason).
#   cmake -DBUILD_DIR=... -DTARGET=... -DHEADER=... -P forbidden_include.cmake
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
string(REGEX MATCH "${HEADER}: No such file or directory|'${HEADER}' file not found" found "${out}")
if(code EQUAL 0)
  message(FATAL_ERROR "${TARGET} built: ${HEADER} is reachable from a room that may not use it")
elseif(NOT found)
  message(FATAL_ERROR "${TARGET} failed to build, but not because ${HEADER} is missing:\n${out}")
endif()
message(STATUS "${TARGET} does not build: ${HEADER} is not found, as the room table says")
