# Where `cmake --install` puts the suite, and the Debian package `cpack` makes of it.
#
#   plugins        Slurm's PluginDir (SLURM_AI_PLUGIN_INSTALL_DIR), an absolute path: Slurm
#                  loads plugins from there, wherever the rest goes
#   as-cons-tres   the select plugin built as select/cons_tres, in a directory of its own
#                  (SLURM_AI_AS_CONS_TRES_INSTALL_DIR, default <PluginDir>/../slurm-ai/as-cons-tres)
#   tools          <prefix>/bin
#   man pages      <prefix>/share/man/man1 (docs/man/*.1), man5 (ai_select.conf.5)
#   examples       <prefix>/share/slurm-ai/slurm.conf.d (contrib/slurm.conf.d)
#   documentation  <prefix>/share/doc/slurm-ai
#
# Stage with DESTDIR (`DESTDIR=/tmp/root cmake --install build`): --prefix moves the tools
# but not the plugins. `cpack -G DEB` in the build directory (or the `package` target) makes
# slurm-ai_<version>-1+slurm<slurm version>_<arch>.deb with prefix /usr. A select plugin
# works only with the Slurm release it was built against, so the package depends on exactly
# that version of the package holding Slurm's plugins (Debian's slurm-wlm-basic-plugins,
# SchedMD's slurm-smd): the same Slurm's daemons and clients each depend on the same exact
# version of it, so an upgrade of any of them without a rebuilt slurm-ai is refused by apt.
#
# For the CMakeLists of the plugins and tools:
#   slurm_ai_install_plugin(target)   into the PluginDir
#   slurm_ai_install_tool(target)     into bin; a tool with a man page adds docs/man/<target>.1
#   slurm_ai_install_script(file name)   a script into bin under `name`
include(GNUInstallDirs)

# Slurm's PluginDir: the directory that holds the installed select_cons_tres.so (the select
# plugin forwards to it from the same directory), looked for where pkg-config's slurm
# libdir points and where Debian's, SchedMD's, RPM and source installs put it.
if(SLURM_AI_BUILD_PLUGINS)
  set(_slurm_plugin_dirs /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/slurm-wlm /usr/lib/slurm-wlm
                         /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/slurm /usr/lib64/slurm
                         /usr/lib/slurm /usr/local/lib/slurm)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_get_variable(_slurm_pc_libdir slurm libdir)
    if(_slurm_pc_libdir)
      list(PREPEND _slurm_plugin_dirs ${_slurm_pc_libdir}/slurm-wlm ${_slurm_pc_libdir}/slurm)
    endif()
  endif()
  find_path(SLURM_AI_SLURM_PLUGIN_DIR select_cons_tres.so PATHS ${_slurm_plugin_dirs}
            NO_DEFAULT_PATH DOC "Directory of the installed Slurm's plugins")
  set(_default_plugin_dir "${SLURM_AI_SLURM_PLUGIN_DIR}")
  if(NOT _default_plugin_dir)
    set(_default_plugin_dir "${CMAKE_INSTALL_FULL_LIBDIR}/slurm")
    message(WARNING "No installed select_cons_tres.so found: plugins will install into "
                    "${_default_plugin_dir}; set -DSLURM_AI_PLUGIN_INSTALL_DIR to Slurm's PluginDir")
  endif()
  # STRING, not PATH: CMake would silently make a relative PATH value absolute from the
  # directory cmake runs in.
  set(SLURM_AI_PLUGIN_INSTALL_DIR "${_default_plugin_dir}" CACHE STRING
      "Where `cmake --install` puts the plugins: Slurm's PluginDir (absolute)")
  if(NOT IS_ABSOLUTE "${SLURM_AI_PLUGIN_INSTALL_DIR}")
    message(FATAL_ERROR "SLURM_AI_PLUGIN_INSTALL_DIR='${SLURM_AI_PLUGIN_INSTALL_DIR}': expected "
                        "an absolute path (Slurm's PluginDir)")
  endif()
  message(STATUS "Plugins install into ${SLURM_AI_PLUGIN_INSTALL_DIR}")
  # The as-cons-tres build of the select plugin (a select_cons_tres.so of the suite's): a
  # directory of its own beside Slurm's, never Slurm's, which has cons_tres itself.
  get_filename_component(_plugin_parent "${SLURM_AI_PLUGIN_INSTALL_DIR}" DIRECTORY)
  set(SLURM_AI_AS_CONS_TRES_INSTALL_DIR "${_plugin_parent}/slurm-ai/as-cons-tres" CACHE STRING
      "Where `cmake --install` puts the select plugin built as select/cons_tres (absolute)")
  if(NOT IS_ABSOLUTE "${SLURM_AI_AS_CONS_TRES_INSTALL_DIR}" OR
     SLURM_AI_AS_CONS_TRES_INSTALL_DIR STREQUAL SLURM_AI_PLUGIN_INSTALL_DIR)
    message(FATAL_ERROR "SLURM_AI_AS_CONS_TRES_INSTALL_DIR='${SLURM_AI_AS_CONS_TRES_INSTALL_DIR}': "
                        "expected an absolute path other than Slurm's PluginDir")
  endif()
endif()

set(SLURM_AI_DATA_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/slurm-ai)

function(slurm_ai_install_plugin target)
  install(TARGETS ${target} LIBRARY DESTINATION ${SLURM_AI_PLUGIN_INSTALL_DIR})
endfunction()

function(slurm_ai_install_tool target)
  install(TARGETS ${target} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

function(slurm_ai_install_script file name)
  install(PROGRAMS ${file} DESTINATION ${CMAKE_INSTALL_BINDIR} RENAME ${name})
endfunction()

# What belongs to no target: man pages, the example configuration, the docs.
file(GLOB _slurm_ai_man_pages CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/*.1)
install(FILES ${_slurm_ai_man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/ai_select.conf.5 DESTINATION ${CMAKE_INSTALL_MANDIR}/man5)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/contrib/slurm.conf.d DESTINATION ${SLURM_AI_DATA_INSTALL_DIR})
# The examples name Debian's PluginDir; installed, they name the directories this build's
# plugins go to (SchedMD's packages have /usr/lib/<arch>/slurm).
if(SLURM_AI_BUILD_PLUGINS)
  set(_debian_plugins /usr/lib/x86_64-linux-gnu/slurm-wlm)
  set(_debian_alias /usr/lib/x86_64-linux-gnu/slurm-ai/as-cons-tres)
  install(CODE "
    foreach(f ai-suite.conf plugstack.conf.d/ai.conf)
      set(p \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${SLURM_AI_DATA_INSTALL_DIR}/slurm.conf.d/\${f}\")
      file(READ \"\${p}\" text)
      string(REPLACE \"${_debian_alias}\" \"${SLURM_AI_AS_CONS_TRES_INSTALL_DIR}\" text \"\${text}\")
      string(REPLACE \"${_debian_plugins}\" \"${SLURM_AI_PLUGIN_INSTALL_DIR}\" text \"\${text}\")
      file(WRITE \"\${p}\" \"\${text}\")
    endforeach()")
endif()
# The daemons' units, where systemd looks for packaged ones; installing does not enable them.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/contrib/systemd/ DESTINATION lib/systemd/system
        FILES_MATCHING PATTERN "*.service")
# The Grafana dashboard over ai-metrics' families.
install(FILES ${PROJECT_SOURCE_DIR}/contrib/grafana/slurm-ai.json
        DESTINATION ${SLURM_AI_DATA_INSTALL_DIR}/grafana)
file(GLOB _slurm_ai_docs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${_slurm_ai_docs} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/slurm-ai)

# The package is described once every target exists and SlurmSource.cmake has said which
# Slurm the plugins are for: at the end of the top-level CMakeLists.txt.
function(_slurm_ai_package)
  set(CPACK_GENERATOR DEB)
  set(CPACK_PACKAGE_NAME slurm-ai)
  set(CPACK_PACKAGE_VENDOR slurm-ai)
  set(CPACK_PACKAGE_CONTACT "slurm-ai maintainers <root@localhost>" CACHE STRING
      "Maintainer field of the .deb")
  set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
  string(CONCAT CPACK_PACKAGE_DESCRIPTION
         "select/ai_cons_tres, a drop-in for cons_tres that places jobs by GPU, NVLink, PCIe, "
         "NIC and InfiniBand topology; spank_ai.so with the --ai-* job options and each "
         "task's environment; ai-resize and the ai-elasticd daemon (elastic jobs, gangs); "
         "ai-recover (checkpoint-triggered rescheduling); ai-metrics (an OpenMetrics endpoint "
         "and a live map of the cluster, with a Grafana dashboard); ai-topo, ai-place, ai-explain, "
         "ai-fit, ai-sim and ai-bench-placement; example configuration and man pages.")
  set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
  set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
  set(CPACK_STRIP_FILES ON)   # RelWithDebInfo's debug info would make the package 60 MB
  set(CPACK_DEBIAN_PACKAGE_SECTION admin)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
  set(CPACK_DEBIAN_PACKAGE_SUGGESTS "hwloc, infiniband-diags, graphviz")
  set(release 1)
  if(SLURM_AI_BUILD_PLUGINS)
    # The package that holds the installed Slurm's plugins and libslurmfull: Debian's
    # slurm-wlm-basic-plugins, or slurm-smd where SchedMD's own packages run Slurm (25.11
    # and 26.05 here, tools/slurm-from-source.sh); each's daemons and clients depend on
    # exactly its version. Its full version (22.05.8-4+deb12u3, 26.05.3-1), not only the
    # upstream one that config.h has: the source tree tools/setup.sh configures is that
    # exact package's. (Not with SLURM_AI_MATCH_INSTALLED_SLURM=OFF: the installed package
    # is another Slurm.)
    set(deb_package slurm-wlm-basic-plugins)
    set(deb_version "")
    if(SLURM_AI_MATCH_INSTALLED_SLURM)
      foreach(candidate slurm-wlm-basic-plugins slurm-smd)
        execute_process(COMMAND dpkg-query -W -f=\${Version} ${candidate}
                        OUTPUT_VARIABLE deb_version RESULT_VARIABLE rc ERROR_QUIET)
        if(rc EQUAL 0 AND deb_version)
          set(deb_package ${candidate})
          break()
        endif()
        set(deb_version "")
      endforeach()
    endif()
    set(SLURM_AI_SLURM_DEB_PACKAGE "${deb_package}" CACHE STRING
        "The Slurm package (its plugins) the .deb depends on exactly")
    set(SLURM_AI_SLURM_DEB_VERSION "${deb_version}" CACHE STRING
        "The version of SLURM_AI_SLURM_DEB_PACKAGE the .deb depends on exactly")
    set(pkg ${SLURM_AI_SLURM_DEB_PACKAGE})
    if(NOT SLURM_AI_SLURM_DEB_VERSION)
      message(WARNING "${pkg} is not installed: the .deb will depend on "
                      "Slurm ${SLURM_AI_SLURM_VERSION} by upstream version only")
      set(CPACK_DEBIAN_PACKAGE_DEPENDS
          "${pkg} (>= ${SLURM_AI_SLURM_VERSION}), ${pkg} (<< ${SLURM_AI_SLURM_VERSION}.0~)")
    elseif(NOT SLURM_AI_SLURM_DEB_VERSION MATCHES "^${SLURM_AI_SLURM_VERSION}-")
      message(FATAL_ERROR "SLURM_AI_SLURM_DEB_VERSION=${SLURM_AI_SLURM_DEB_VERSION} is not a "
                          "package of Slurm ${SLURM_AI_SLURM_VERSION}, which the plugins are built for")
    else()
      set(CPACK_DEBIAN_PACKAGE_DEPENDS "${pkg} (= ${SLURM_AI_SLURM_DEB_VERSION})")
    endif()
    set(release "1+slurm${SLURM_AI_SLURM_VERSION}")
  endif()
  set(CPACK_DEBIAN_PACKAGE_RELEASE ${release})
  include(CPack)
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL _slurm_ai_package)
