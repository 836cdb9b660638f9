# Locates the configured Slurm source tree whose internal headers the select plugin
# needs (job_record_t, bitstr_t, src/common/select.h, config.h). No binary package ships
# them, so tools/setup.sh unpacks and configures Debian's source package of the installed
# version and records its path; an admin may point SLURM_AI_SLURM_SRC_DIR at their own
# configured tree instead.
#
# A select plugin must match slurmctld down to the micro release, so the build stops
# when the tree's version differs from the installed slurmctld's.
#
# Defines: SLURM_AI_SLURM_SRC_DIR, SLURM_AI_SLURM_VERSION, SLURM_AI_CONS_TRES_PATH and
# the imported target slurm_ai::slurm_internal_headers.

set(_setup_record "/var/cache/slurm-ai/slurm-src/current")
if(DEFINED ENV{SLURM_AI_CACHE})
  set(_setup_record "$ENV{SLURM_AI_CACHE}/slurm-src/current")
endif()
set(_default_tree "")
if(EXISTS "${_setup_record}")
  file(STRINGS "${_setup_record}" _default_tree LIMIT_COUNT 1)
endif()
set(SLURM_AI_SLURM_SRC_DIR "${_default_tree}" CACHE PATH
    "Configured Slurm source tree of exactly the installed version (tools/setup.sh makes one)")

if(NOT SLURM_AI_SLURM_SRC_DIR OR NOT EXISTS "${SLURM_AI_SLURM_SRC_DIR}/slurm/slurm.h"
   OR NOT EXISTS "${SLURM_AI_SLURM_SRC_DIR}/src/slurmctld/slurmctld.h")
  message(FATAL_ERROR
    "No Slurm source tree found (SLURM_AI_SLURM_SRC_DIR='${SLURM_AI_SLURM_SRC_DIR}').\n"
    "Run tools/setup.sh as root (it fetches and configures Debian's source package of the "
    "installed Slurm), or pass -DSLURM_AI_SLURM_SRC_DIR=/path/to/configured/slurm, or "
    "-DSLURM_AI_BUILD_PLUGINS=OFF to build only the libraries and tools.")
endif()
if(NOT EXISTS "${SLURM_AI_SLURM_SRC_DIR}/config.h")
  message(FATAL_ERROR
    "Slurm tree ${SLURM_AI_SLURM_SRC_DIR} is not configured (no config.h): run ./configure "
    "there with the options your Slurm was built with.")
endif()

file(STRINGS "${SLURM_AI_SLURM_SRC_DIR}/config.h" _vline
     REGEX "^#define SLURM_VERSION_STRING \"[^\"]+\"")
string(REGEX REPLACE ".*\"([^\"]+)\".*" "\\1" SLURM_AI_SLURM_VERSION "${_vline}")
if(NOT SLURM_AI_SLURM_VERSION)
  message(FATAL_ERROR "No SLURM_VERSION_STRING in ${SLURM_AI_SLURM_SRC_DIR}/config.h")
endif()

# OFF: build the plugins against a tree of another Slurm than the installed one, to check
# that they compile there (no test can load them here, and the tools still use the
# installed libslurm: build only the plugin targets).
option(SLURM_AI_MATCH_INSTALLED_SLURM
       "Stop when the tree's Slurm version is not the installed slurmctld's" ON)
if(SLURM_AI_MATCH_INSTALLED_SLURM)
  find_program(SLURM_AI_SLURMCTLD slurmctld PATHS /usr/sbin /usr/local/sbin)
endif()
if(NOT SLURM_AI_MATCH_INSTALLED_SLURM)
  message(WARNING "SLURM_AI_MATCH_INSTALLED_SLURM=OFF: the plugins are built against Slurm "
                  "${SLURM_AI_SLURM_VERSION} (${SLURM_AI_SLURM_SRC_DIR}) without comparing it with "
                  "an installed slurmctld; build only slurm_ai_select_plugin and "
                  "slurm_ai_spank_plugin")
elseif(SLURM_AI_SLURMCTLD)
  execute_process(COMMAND ${SLURM_AI_SLURMCTLD} -V OUTPUT_VARIABLE _installed
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc)
  string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" _installed "${_installed}")
  if(NOT _installed STREQUAL SLURM_AI_SLURM_VERSION)
    message(FATAL_ERROR
      "Slurm version mismatch: the source tree ${SLURM_AI_SLURM_SRC_DIR} is Slurm "
      "${SLURM_AI_SLURM_VERSION} but the installed slurmctld (${SLURM_AI_SLURMCTLD}) is "
      "'${_installed}'. A select plugin must match slurmctld down to the micro release: "
      "rerun tools/setup.sh, or point SLURM_AI_SLURM_SRC_DIR at a tree of ${_installed}.")
  endif()
else()
  message(WARNING "slurmctld not found: building against Slurm ${SLURM_AI_SLURM_VERSION} "
                  "from ${SLURM_AI_SLURM_SRC_DIR} without checking the installed version")
endif()
message(STATUS "Slurm source tree: ${SLURM_AI_SLURM_SRC_DIR} (${SLURM_AI_SLURM_VERSION})")

# Where Debian's cons_tres lives; the plugin searches PluginDir first at run time.
find_file(SLURM_AI_CONS_TRES_PATH select_cons_tres.so
          PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/slurm-wlm /usr/lib/slurm-wlm
                /usr/lib/slurm /usr/lib64/slurm /usr/local/lib/slurm
          NO_DEFAULT_PATH)
if(NOT SLURM_AI_CONS_TRES_PATH)
  set(SLURM_AI_CONS_TRES_PATH "select_cons_tres.so" CACHE FILEPATH "" FORCE)
endif()

add_library(slurm_ai_slurm_internal_headers INTERFACE)
add_library(slurm_ai::slurm_internal_headers ALIAS slurm_ai_slurm_internal_headers)
# SYSTEM: Slurm's own headers are not held to the project's warning set.
target_include_directories(slurm_ai_slurm_internal_headers SYSTEM INTERFACE
                           ${SLURM_AI_SLURM_SRC_DIR} ${SLURM_AI_SLURM_SRC_DIR}/slurm)
target_compile_definitions(slurm_ai_slurm_internal_headers INTERFACE HAVE_CONFIG_H)
