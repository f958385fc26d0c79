# warpcheck for Makefile projects.
#
#   include /path/to/warpcheck/scripts/warpcheck.mk
#
#   WARPCHECK_CUDAFLAGS   flags for clang CUDA compiles: the plugin's
#                         frontend action (-fplugin: the launches' block
#                         shapes, read from the AST), its pass on the device
#                         side (-fpass-plugin), and line tables, so findings
#                         are warnings of the normal build:
#                           NVCCFLAGS += $(WARPCHECK_CUDAFLAGS)   (with clang)
#                         The plugin is the one built for the LLVM major of
#                         WARPCHECK_CLANG (default $(CLANG), else $(CXX)); the
#                         build stops with warpcheck's reason if there is none.
#   WARPCHECK_NO_TOOLKIT_FLAGS
#                         flags for clang CUDA compiles without a CUDA
#                         toolkit: warpcheck's own CUDA header, force-included,
#                         and its include directory: the toolkit headers files
#                         include by name (<cuda_runtime.h>, <cuda.h>, ...)
#                         and cooperative_groups (installed beside this file,
#                         or in the source tree). Compile with
#                         --cuda-device-only and -S (or -emit-llvm -c).
#   make warpcheck        runs `warpcheck check` over WARPCHECK_DB (a
#                         compile_commands.json, e.g. from `bear -- make`)
#                         when it exists, else over WARPCHECK_SOURCES;
#                         WARPCHECK_ARGS are passed on (e.g. --werror).

WARPCHECK_MK_DIR := $(dir $(lastword $(MAKEFILE_LIST)))
WARPCHECK ?= $(firstword $(wildcard $(WARPCHECK_MK_DIR)../target/release/warpcheck \
                                    $(WARPCHECK_MK_DIR)../target/debug/warpcheck \
                                    $(WARPCHECK_MK_DIR)../../bin/warpcheck) warpcheck)
WARPCHECK_CLANG ?= $(or $(CLANG),$(CXX))
# The plugin for $(1)'s LLVM major, or stop with warpcheck's reason.
warpcheck_plugin_for = $(strip $(eval WARPCHECK_PLUGIN_OUT := $(shell $(WARPCHECK) print-plugin-path --clang '$(1)' 2>&1))$(if $(filter 0,$(.SHELLSTATUS)),$(WARPCHECK_PLUGIN_OUT),$(error $(WARPCHECK_PLUGIN_OUT))))
# Found on first use and kept: `?=` would be expanded again, running
# print-plugin-path and a clang, for every recipe that names the flags.
ifeq ($(origin WARPCHECK_PLUGIN),undefined)
WARPCHECK_PLUGIN = $(eval WARPCHECK_PLUGIN := $(call warpcheck_plugin_for,$(WARPCHECK_CLANG)))$(WARPCHECK_PLUGIN)
endif
# The frontend action for the same clang, found the same way.
warpcheck_frontend_for = $(strip $(eval WARPCHECK_FRONTEND_OUT := $(shell $(WARPCHECK) print-plugin-path --frontend --clang '$(1)' 2>&1))$(if $(filter 0,$(.SHELLSTATUS)),$(WARPCHECK_FRONTEND_OUT),$(error $(WARPCHECK_FRONTEND_OUT))))
ifeq ($(origin WARPCHECK_FRONTEND),undefined)
WARPCHECK_FRONTEND = $(eval WARPCHECK_FRONTEND := $(call warpcheck_frontend_for,$(WARPCHECK_CLANG)))$(WARPCHECK_FRONTEND)
endif
WARPCHECK_CUDAFLAGS = -fplugin=$(WARPCHECK_FRONTEND) -Xarch_device -fpass-plugin=$(WARPCHECK_PLUGIN) \
                      -gline-tables-only
# Installed: share/warpcheck/{warpcheck_cuda.h,include}; in the source tree:
# src/frontend/.
WARPCHECK_HEADERS_DIR ?= $(patsubst %/,%,$(dir $(firstword $(wildcard \
                           $(WARPCHECK_MK_DIR)warpcheck_cuda.h \
                           $(WARPCHECK_MK_DIR)../src/frontend/warpcheck_cuda.h))))
WARPCHECK_NO_TOOLKIT_FLAGS = -nocudainc -nocudalib -Xclang -target-feature -Xclang +ptx75 \
                             -include $(WARPCHECK_HEADERS_DIR)/warpcheck_cuda.h \
                             -isystem $(WARPCHECK_HEADERS_DIR)/include
WARPCHECK_DB ?= compile_commands.json
WARPCHECK_SOURCES ?= $(wildcard *.cu)
WARPCHECK_ARGS ?=

# Defining a target here must not change the including Makefile's default.
WARPCHECK_SAVED_GOAL := $(.DEFAULT_GOAL)

.PHONY: warpcheck
warpcheck:
ifneq ($(wildcard $(WARPCHECK_DB)),)
	$(WARPCHECK) check $(WARPCHECK_ARGS) -p $(WARPCHECK_DB)
else
	$(WARPCHECK) check $(WARPCHECK_ARGS) $(WARPCHECK_SOURCES)
endif

.DEFAULT_GOAL := $(WARPCHECK_SAVED_GOAL)
