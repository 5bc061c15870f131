# The render room only draws: it never reads a file, a manifest or a report, and never runs a
# pipeline that does. Results arrive with every number and name a page or table shows; render
# writes its own outputs (CSV, HTML) and nothing else. The rule is checked on what a library
# calls, which no include view can hide: after nsel_render is built (POST_BUILD), its undefined
# symbols are matched against the readers below, and a match fails the build, naming the call.
#
#   cmake -DLIBRARY=<static library> -DNM=<nm> -P NselDrawsOnly.cmake
#
# Included from CMakeLists.txt (no LIBRARY), it defines nsel_draws_only(<target>), which adds the
# check to a target's build.

if(NOT DEFINED LIBRARY)
  function(nsel_draws_only target)
    add_custom_command(TARGET ${target} POST_BUILD
      COMMAND ${CMAKE_COMMAND} -DLIBRARY=$<TARGET_FILE:${target}> -DNM=${CMAKE_NM}
              -P ${PROJECT_SOURCE_DIR}/cmake/NselDrawsOnly.cmake
      VERBATIM)
  endfunction()
  return()
endif()

# Demangled names (nm -C) of what reads: nsel's own readers of files, manifests, reports and
# report folders, the pipelines that read, and the C and C++ library calls that open or list.
set(readers
  "nsel::read_small_file\\(" "nsel::read_capped_file\\(" "nsel::parse_manifest\\("
  "nsel::manifest_describing\\(" "nsel::identify_report\\(" "nsel::discover_reports\\("
  "nsel::find_report_files\\(" "nsel::report_writer_version\\(" "nsel::judge_report\\("
  "nsel::check_run\\(" "nsel::list_reports\\(" "nsel::stopped_by_signal\\("
  "nsel::ensure_export\\(" "nsel::summarize_export\\(" "nsel::read_step_ranges\\("
  "nsel::export_has_nvtx\\(" "nsel::summarize_reports\\(" "nsel::diff_reports\\("
  "nsel::recover_reports\\(" "nsel::read_process_" "nsel::process_"
  "std::basic_ifstream" "std::basic_fstream" "std::filesystem::[_a-z0-9]*::directory_iterator"
  "std::filesystem::[_a-z0-9]*::recursive_directory_iterator" "sqlite3_")
# C calls, matched as whole names (nm prints them bare).
set(c_readers open open64 openat openat64 fopen fopen64 read pread pread64 fread opendir
  fdopendir readdir readdir64 scandir mmap mmap64)

execute_process(COMMAND ${NM} -C -u ${LIBRARY} RESULT_VARIABLE code OUTPUT_VARIABLE symbols
  ERROR_VARIABLE problem)
if(NOT code EQUAL 0)
  message(FATAL_ERROR "${NM} -C -u ${LIBRARY} failed (${code}): ${problem}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(found)
foreach(line IN LISTS lines)
  string(REGEX REPLACE "^ *U +" "" name "${line}")
  if(name STREQUAL line OR name STREQUAL "")
    continue()  # a member's header ("x.cpp.o:") or a blank line
  endif()
  foreach(reader IN LISTS readers)
    if(name MATCHES "${reader}")
      list(APPEND found "${name}")
      break()
    endif()
  endforeach()
  foreach(reader IN LISTS c_readers)
    if(name STREQUAL reader)
      list(APPEND found "${name}")
    endif()
  endforeach()
endforeach()
if(found)
  list(REMOVE_DUPLICATES found)
  list(JOIN found "\n  " shown)
  message(FATAL_ERROR "render draws only, but ${LIBRARY} reads:\n  ${shown}\n"
    "Read in workflow (or the room that owns the file) and give render the result.")
endif()
