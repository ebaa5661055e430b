# What `cmake --install` puts under the prefix: the tools, libfdx and fdx.h,
# a pkg-config file, a CMake package (find_package(fdx), target fdx::fdx),
# the man pages and the bash completions.
include(CMakePackageConfigHelpers)

install(TARGETS fdx EXPORT fdxTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} NAMELINK_COMPONENT Development
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${FDX_TOOLS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# A static libfdx leaves SQLite3, cJSON, pthreads and libdl for the consumer to
# link; libpq is loaded at run time, when a PostgreSQL store opens.
set(FDX_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/fdx)
install(EXPORT fdxTargets NAMESPACE fdx:: FILE fdxTargets.cmake DESTINATION ${FDX_CMAKEDIR})
configure_package_config_file(cmake/fdxConfig.cmake.in ${PROJECT_BINARY_DIR}/fdxConfig.cmake
                              INSTALL_DESTINATION ${FDX_CMAKEDIR})
# 0.x: a minor release may break compatibility, so only the same minor matches.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(FDX_COMPATIBILITY SameMinorVersion)
else()
  set(FDX_COMPATIBILITY SameMajorVersion)
endif()
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fdxConfigVersion.cmake
                                 COMPATIBILITY ${FDX_COMPATIBILITY})
install(FILES ${PROJECT_BINARY_DIR}/fdxConfig.cmake ${PROJECT_BINARY_DIR}/fdxConfigVersion.cmake
        DESTINATION ${FDX_CMAKEDIR})

# fdx.pc is written at install time, for the prefix given to `cmake --install`.
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(FDX_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(FDX_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(FDX_PC_PREFIX "@CMAKE_INSTALL_PREFIX@")
configure_file(cmake/fdx.pc.in ${PROJECT_BINARY_DIR}/fdx.pc.in @ONLY)
install(CODE "configure_file(\"${PROJECT_BINARY_DIR}/fdx.pc.in\" \"${PROJECT_BINARY_DIR}/fdx.pc\" @ONLY)")
install(FILES ${PROJECT_BINARY_DIR}/fdx.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# Every page in man/ is installed in its section; a new tool only needs its page.
file(GLOB FDX_MAN_PAGES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/man/*.[1-8])
foreach(page IN LISTS FDX_MAN_PAGES)
  string(REGEX MATCH "[1-8]$" section "${page}")
  install(FILES ${page} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()

# bash-completion loads completions/<command> on first use of <command>: one
# copy of the script, which completes every tool, under each tool's name.
foreach(tool IN LISTS FDX_TOOLS)
  install(FILES ${PROJECT_SOURCE_DIR}/completion/fdx.bash
          DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME ${tool})
endforeach()
