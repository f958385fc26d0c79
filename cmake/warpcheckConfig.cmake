# find_package(warpcheck CONFIG) support.
#
#   find_package(warpcheck REQUIRED CONFIG PATHS /path/to/warpcheck/cmake)
#   target_link_libraries(my_kernels PRIVATE warpcheck::plugin)
#       -> CUDA sources compiled by Clang (language CUDA, or CXX with -x cuda)
#          get -fpass-plugin=libwarpcheck.so and line tables, so findings are
#          warnings in the normal build. The compiler's LLVM major version must
#          match the plugin's (19); otherwise the target adds nothing and
#          configuring warns.
#   warpcheck_add_check_target(name [TARGET tgt] SOURCES a.cu ... [ARGS ...])
#       -> a `warpcheck_<name>` target running `warpcheck check` with the
#          target's include directories and definitions (see Warpcheck.cmake).
#
# nvcc users: no plugin is possible (nvcc is not LLVM). Use the launcher:
#   -DCMAKE_CUDA_COMPILER_LAUNCHER="${WARPCHECK_EXECUTABLE};launch;--"

include("${CMAKE_CURRENT_LIST_DIR}/Warpcheck.cmake")

set(WARPCHECK_LLVM_MAJOR 19)

function(warpcheck_add_check_target name)
  warpcheck_add_check(${name} ${ARGN})
endfunction()

if(NOT TARGET warpcheck::plugin)
  add_library(warpcheck::plugin INTERFACE IMPORTED)
  execute_process(COMMAND ${WARPCHECK_EXECUTABLE} print-plugin-path
    OUTPUT_VARIABLE _wc_plugin OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _wc_rc)
  if(NOT _wc_rc EQUAL 0)
    message(FATAL_ERROR "warpcheck: libwarpcheck.so not found next to ${WARPCHECK_EXECUTABLE}")
  endif()
  set(WARPCHECK_PLUGIN "${_wc_plugin}" CACHE FILEPATH "The warpcheck pass plugin")
  # For each language Clang compiles here, the plugin's flags when its
  # LLVM major version matches ours.
  set(_wc_langs "")
  foreach(_lang IN ITEMS CUDA CXX)
    get_property(_enabled GLOBAL PROPERTY ENABLED_LANGUAGES)
    if(NOT _lang IN_LIST _enabled)
      continue()
    endif()
    if(NOT CMAKE_${_lang}_COMPILER_ID STREQUAL "Clang")
      continue()
    endif()
    string(REGEX MATCH "^[0-9]+" _major "${CMAKE_${_lang}_COMPILER_VERSION}")
    if(NOT _major EQUAL WARPCHECK_LLVM_MAJOR)
      message(WARNING "warpcheck: the plugin is built for LLVM ${WARPCHECK_LLVM_MAJOR}, "
        "but the ${_lang} compiler is Clang ${CMAKE_${_lang}_COMPILER_VERSION}: "
        "warpcheck::plugin adds nothing for ${_lang}")
      continue()
    endif()
    list(APPEND _wc_langs ${_lang})
  endforeach()
  if(_wc_langs)
    list(JOIN _wc_langs "," _wc_list)
    set_property(TARGET warpcheck::plugin PROPERTY INTERFACE_COMPILE_OPTIONS
      "$<$<COMPILE_LANGUAGE:${_wc_list}>:-fpass-plugin=${WARPCHECK_PLUGIN};-gline-tables-only>")
  endif()
endif()
set(warpcheck_FOUND TRUE)
