# warpcheck integration for CMake projects.
#
#   list(APPEND CMAKE_MODULE_PATH /path/to/warpcheck/cmake)
#   include(Warpcheck)
#   warpcheck_add_check(my_kernels SOURCES kernels.cu other.cu [ARGS --werror --block-dim 128])
#       -> a target `warpcheck_my_kernels` (and part of `warpcheck_all`) that runs
#          `warpcheck check` on the sources with the target's include dirs and definitions.
#   warpcheck_enable_plugin(my_target)
#       -> when CUDA is compiled by clang, adds -fplugin=<plugin> (launch shapes
#          from the AST) and -fpass-plugin=<plugin> so warnings
#          appear in the normal build; the plugin is the one built for that clang's
#          LLVM major, and configuring stops when there is none.
#   warpcheck_plugin_for(compiler out_var)
#       -> the plugin for a clang (`warpcheck print-plugin-path --clang`), or a
#          configure error with warpcheck's reason.
#
# Set WARPCHECK_EXECUTABLE to pick a binary.

find_program(WARPCHECK_EXECUTABLE NAMES warpcheck
  HINTS ${CMAKE_CURRENT_LIST_DIR}/../target/release ${CMAKE_CURRENT_LIST_DIR}/../target/debug
        ${CMAKE_CURRENT_LIST_DIR}/../target/llvm22/release ${CMAKE_CURRENT_LIST_DIR}/../target/llvm22/debug
        ${CMAKE_CURRENT_LIST_DIR}/../../../bin)
if(NOT WARPCHECK_EXECUTABLE)
  message(FATAL_ERROR "warpcheck not found: build it (cargo build --release) or set WARPCHECK_EXECUTABLE")
endif()

if(NOT TARGET warpcheck_all)
  add_custom_target(warpcheck_all)
endif()

function(warpcheck_add_check name)
  cmake_parse_arguments(WC "" "TARGET" "SOURCES;ARGS" ${ARGN})
  set(flags "")
  if(WC_TARGET)
    set(incs "$<TARGET_PROPERTY:${WC_TARGET},INCLUDE_DIRECTORIES>")
    set(defs "$<TARGET_PROPERTY:${WC_TARGET},COMPILE_DEFINITIONS>")
    list(APPEND flags
      "$<$<BOOL:${incs}>:-I$<JOIN:${incs},$<SEMICOLON>-I>>"
      "$<$<BOOL:${defs}>:-D$<JOIN:${defs},$<SEMICOLON>-D>>")
  endif()
  set(sources "")
  foreach(src IN LISTS WC_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    list(APPEND sources "${abs}")
  endforeach()
  add_custom_target(warpcheck_${name}
    COMMAND ${WARPCHECK_EXECUTABLE} check ${WC_ARGS} ${flags} ${sources}
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    COMMAND_EXPAND_LISTS
    VERBATIM
    COMMENT "warpcheck: ${name}")
  add_dependencies(warpcheck_all warpcheck_${name})
endfunction()

# The pass plugin for a clang, or with FRONTEND as a third argument the
# frontend action (-fplugin) for it.
function(warpcheck_plugin_for compiler out_var)
  set(kind "")
  set(what "pass plugin")
  if(ARGV2 STREQUAL "FRONTEND")
    set(kind --frontend)
    set(what "frontend action")
  endif()
  execute_process(COMMAND ${WARPCHECK_EXECUTABLE} print-plugin-path ${kind} --clang ${compiler}
    OUTPUT_VARIABLE plugin ERROR_VARIABLE why
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "warpcheck: no ${what} for ${compiler}: ${why}")
  endif()
  set(${out_var} "${plugin}" PARENT_SCOPE)
endfunction()

function(warpcheck_enable_plugin target)
  warpcheck_plugin_for("${CMAKE_CUDA_COMPILER}" plugin)
  warpcheck_plugin_for("${CMAKE_CUDA_COMPILER}" frontend FRONTEND)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-fplugin=${frontend} -fpass-plugin=${plugin} -gline-tables-only>)
endfunction()
