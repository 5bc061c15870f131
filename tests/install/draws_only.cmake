# Builds a library of render's own view that reads a file and a manifest, and succeeds only when
# its build fails because the check of cmake/NselDrawsOnly.cmake names those calls (not for any
# other reason).
#   cmake -DBUILD_DIR=... -DTARGET=... -P draws_only.cmake
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
  RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(code EQUAL 0)
  message(FATAL_ERROR "${TARGET} built: a library that reads a manifest passed render's check")
endif()
foreach(call IN ITEMS "render draws only, but" "nsel::read_small_file(" "nsel::parse_manifest("
                      "std::basic_ifstream")
  string(FIND "${out}" "${call}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${TARGET} failed to build, but its check did not name ${call}:\n${out}")
  endif()
endforeach()
message(STATUS "${TARGET} does not build: render's check names the reads, as the room table says")
