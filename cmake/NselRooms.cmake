# The room table, enforced by the build. Each room is a static library nsel_<room> (nsel::<room>)
# that sees only its own headers and those of the rooms it may use: its include path is a view
# folder in the build tree holding links to exactly those header folders, so an #include of a
# room it may not use fails to compile, and its link line names only those rooms.
#
#   nsel_room(<room> SOURCES <files...> [USES <rooms...>] [LINK <private libs...>]
#             [PUBLIC_LINK <libs...>] [EXTRA_HEADERS <files under include/nsel>...])
#
# Public headers: include/nsel/<room>/*.hpp. Internal headers: src/<room>/*.hpp, included as
# "<room>/x.hpp" by the room itself (and by its tests, through nsel_room_internals).
function(nsel_room room)
  cmake_parse_arguments(ROOM "" "" "SOURCES;USES;LINK;PUBLIC_LINK;EXTRA_HEADERS" ${ARGN})
  set(view ${CMAKE_BINARY_DIR}/rooms/${room})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view}/public/nsel ${view}/internal)
  if(EXISTS ${PROJECT_SOURCE_DIR}/include/nsel/${room})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/nsel/${room} ${view}/public/nsel/${room} SYMBOLIC)
  endif()
  foreach(header IN LISTS ROOM_EXTRA_HEADERS)
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/nsel/${header} ${view}/public/nsel/${header}
      SYMBOLIC)
  endforeach()
  if(EXISTS ${PROJECT_SOURCE_DIR}/src/${room})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/src/${room} ${view}/internal/${room} SYMBOLIC)
  endif()

  add_library(nsel_${room} STATIC ${ROOM_SOURCES})
  add_library(nsel::${room} ALIAS nsel_${room})
  set_target_properties(nsel_${room} PROPERTIES EXPORT_NAME ${room} POSITION_INDEPENDENT_CODE ON)
  target_include_directories(nsel_${room}
    PUBLIC $<BUILD_INTERFACE:${view}/public> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${view}/internal)
  target_compile_options(nsel_${room} PRIVATE ${NSEL_WARNINGS})
  # A sanitized library needs the sanitizer runtimes wherever it is linked, outside this build too
  # (the installed package's users, tests/install's consumer).
  if(NSEL_SANITIZE OR NSEL_FUZZ)
    target_link_options(nsel_${room} INTERFACE -fsanitize=address,undefined)
  endif()
  set(used)
  foreach(other IN LISTS ROOM_USES)
    list(APPEND used nsel_${other})
  endforeach()
  target_link_libraries(nsel_${room} PUBLIC ${used} ${ROOM_PUBLIC_LINK} PRIVATE ${ROOM_LINK})
  set_property(GLOBAL APPEND PROPERTY NSEL_ROOMS ${room})
  set_property(GLOBAL PROPERTY NSEL_ROOM_USES_${room} ${ROOM_USES})
endfunction()

# A room's internal headers, for its own tests.
function(nsel_room_internals target room)
  target_include_directories(${target} PRIVATE ${CMAKE_BINARY_DIR}/rooms/${room}/internal)
endfunction()
