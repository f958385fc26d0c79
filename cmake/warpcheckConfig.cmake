# find_package(warpcheck CONFIG) support.
#
#   find_package(warpcheck REQUIRED CONFIG PATHS /path/to/warpcheck/cmake)
#   target_link_libraries(my_kernels PRIVATE warpcheck::plugin)
#       -> CUDA sources compiled by Clang (language CUDA, or CXX with -x cuda)
#          get -fplugin=<plugin> (the launches' block shapes, read from the
#          AST), -fpass-plugin=<plugin> and line tables, so findings are
#          warnings in the normal build. The plugin is the one built for the
#          compiler's LLVM major (`warpcheck print-plugin-path --clang`, e.g.
#          libwarpcheck-llvm22.so for clang 22); configuring stops with
#          warpcheck's reason when there is none. WARPCHECK_LANGUAGES (default
#          "CUDA;CXX") says which languages' Clang compilers get it.
#   WARPCHECK_NO_TOOLKIT_FLAGS
#       -> compile options for Clang CUDA compiles without a CUDA toolkit:
#          warpcheck's own CUDA header, force-included, and its include
#          directory: the toolkit headers files include by name
#          (<cuda_runtime.h>, <cuda.h>, ...) and cooperative_groups
#          (installed in share/warpcheck, or in the source tree), e.g.
#            target_compile_options(k PRIVATE -x cuda --cuda-device-only
#                                   -emit-llvm --cuda-gpu-arch=sm_80
#                                   ${WARPCHECK_NO_TOOLKIT_FLAGS})
#          (-emit-llvm, not -S: CMake compiles objects with -c.)
#          WARPCHECK_CUDA_HEADER and WARPCHECK_INCLUDE_DIR name the two.
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

# The no-toolkit headers: installed in share/warpcheck, else the tree's.
if(NOT WARPCHECK_CUDA_HEADER)
  foreach(_wc_dir IN ITEMS "${CMAKE_CURRENT_LIST_DIR}/../../../share/warpcheck"
                           "${CMAKE_CURRENT_LIST_DIR}/../src/frontend")
    if(NOT WARPCHECK_CUDA_HEADER AND EXISTS "${_wc_dir}/warpcheck_cuda.h")
      get_filename_component(_wc_dir "${_wc_dir}" ABSOLUTE)
      set(WARPCHECK_CUDA_HEADER "${_wc_dir}/warpcheck_cuda.h")
    endif()
  endforeach()
endif()
if(WARPCHECK_CUDA_HEADER)
  if(NOT WARPCHECK_INCLUDE_DIR)
    get_filename_component(_wc_dir "${WARPCHECK_CUDA_HEADER}" DIRECTORY)
    set(WARPCHECK_INCLUDE_DIR "${_wc_dir}/include")
  endif()
  # SHELL: keeps the repeated -Xclang from CMake's de-duplication.
  set(WARPCHECK_NO_TOOLKIT_FLAGS -nocudainc -nocudalib
    "SHELL:-Xclang -target-feature" "SHELL:-Xclang +ptx75"
    "SHELL:-include ${WARPCHECK_CUDA_HEADER}"
    "SHELL:-isystem ${WARPCHECK_INCLUDE_DIR}")
endif()

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
    warpcheck_plugin_for("${CMAKE_${_lang}_COMPILER}" _wc_frontend FRONTEND)
    set(WARPCHECK_PLUGIN_${_lang} "${_wc_plugin}" CACHE FILEPATH
      "The warpcheck pass plugin for the ${_lang} compiler")
    if(NOT WARPCHECK_PLUGIN)
      set(WARPCHECK_PLUGIN "${_wc_plugin}" CACHE FILEPATH "The warpcheck pass plugin")
    endif()
    list(APPEND _wc_options
      "$<$<COMPILE_LANGUAGE:${_lang}>:-fplugin=${_wc_frontend};-fpass-plugin=${_wc_plugin};-gline-tables-only>")
  endforeach()
  if(_wc_options)
    set_property(TARGET warpcheck::plugin PROPERTY INTERFACE_COMPILE_OPTIONS "${_wc_options}")
  endif()
endif()
set(warpcheck_FOUND TRUE)
