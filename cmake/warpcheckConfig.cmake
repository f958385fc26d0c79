# find_package(warpcheck CONFIG) support.
#
#   find_package(warpcheck REQUIRED CONFIG PATHS /path/to/warpcheck/cmake)
#   target_link_libraries(my_kernels PRIVATE warpcheck::plugin)
#       -> CUDA sources compiled by Clang (language CUDA, or CXX with -x cuda)
#          get -fpass-plugin=<plugin> and line tables, so findings are
#          warnings in the normal build. The plugin is the one built for the
#          compiler's LLVM major (`warpcheck print-plugin-path --clang`, e.g.
#          libwarpcheck-llvm22.so for clang 22); configuring stops with
#          warpcheck's reason when there is none. WARPCHECK_LANGUAGES (default
#          "CUDA;CXX") says which languages' Clang compilers get it.
#   warpcheck_add_check_target(name [TARGET tgt] SOURCES a.cu ... [ARGS ...])
#       -> a `warpcheck_<name>` target running `warpcheck check` with the
#          target's include directories and definitions (see Warpcheck.cmake).
#
# nvcc users: no plugin is possible (nvcc is not LLVM). Use the launcher:
#   -DCMAKE_CUDA_COMPILER_LAUNCHER="${WARPCHECK_EXECUTABLE};launch;--"

include("${CMAKE_CURRENT_LIST_DIR}/Warpcheck.cmake")

function(warpcheck_add_check_target name)
  warpcheck_add_check(${name} ${ARGN})
endfunction()

if(NOT DEFINED WARPCHECK_LANGUAGES)
  set(WARPCHECK_LANGUAGES CUDA CXX)
endif()

if(NOT TARGET warpcheck::plugin)
  add_library(warpcheck::plugin INTERFACE IMPORTED)
  # For each language Clang compiles here, the plugin of its LLVM major.
  set(_wc_options "")
  get_property(_enabled GLOBAL PROPERTY ENABLED_LANGUAGES)
  foreach(_lang IN LISTS WARPCHECK_LANGUAGES)
    if(NOT _lang IN_LIST _enabled OR NOT CMAKE_${_lang}_COMPILER_ID STREQUAL "Clang")
      continue()
    endif()
    warpcheck_plugin_for("${CMAKE_${_lang}_COMPILER}" _wc_plugin)
    set(WARPCHECK_PLUGIN_${_lang} "${_wc_plugin}" CACHE FILEPATH
      "The warpcheck pass plugin for the ${_lang} compiler")
    if(NOT WARPCHECK_PLUGIN)
      set(WARPCHECK_PLUGIN "${_wc_plugin}" CACHE FILEPATH "The warpcheck pass plugin")
    endif()
    list(APPEND _wc_options
      "$<$<COMPILE_LANGUAGE:${_lang}>:-fpass-plugin=${_wc_plugin};-gline-tables-only>")
  endforeach()
  if(_wc_options)
    set_property(TARGET warpcheck::plugin PROPERTY INTERFACE_COMPILE_OPTIONS "${_wc_options}")
  endif()
endif()
set(warpcheck_FOUND TRUE)
