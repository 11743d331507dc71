# Installing libflysim: the public header, the shared and static libraries, a CMake package
# (find_package(flysim) -> flysim::flysim, flysim::flysim_static) and a pkg-config file
# (flysim.pc). MuJoCo is the one the library was built against: the package records its
# header folder and library file (a consumer links the same libmujoco), and the installed
# shared library finds it through its RUNPATH.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_filename_component(FLYSIM_MUJOCO_LIBRARY_DIR "${MuJoCo_LIBRARY}" DIRECTORY)
get_filename_component(_mujoco_soname "${MuJoCo_LIBRARY}" NAME)
set_target_properties(flysim_shared PROPERTIES EXPORT_NAME flysim
                      INSTALL_RPATH "$ORIGIN;${FLYSIM_MUJOCO_LIBRARY_DIR}")
set_target_properties(flysim_static PROPERTIES EXPORT_NAME flysim_static)
add_library(flysim::flysim ALIAS flysim_shared)
add_library(flysim::flysim_static ALIAS flysim_static)
if(SKBUILD) # a pip build installs the Python package only (python/CMakeLists.txt)
  return()
endif()

install(FILES include/flysim/flysim.h DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/flysim")
install(TARGETS flysim_shared flysim_static EXPORT flysimTargets
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
set(_cmake_dir "${CMAKE_INSTALL_LIBDIR}/cmake/flysim")
install(EXPORT flysimTargets NAMESPACE flysim:: DESTINATION "${_cmake_dir}")
configure_package_config_file(cmake/flysimConfig.cmake.in
                              "${PROJECT_BINARY_DIR}/flysimConfig.cmake"
                              INSTALL_DESTINATION "${_cmake_dir}")
write_basic_package_version_file("${PROJECT_BINARY_DIR}/flysimConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/flysimConfig.cmake"
              "${PROJECT_BINARY_DIR}/flysimConfigVersion.cmake" DESTINATION "${_cmake_dir}")
set(FLYSIM_PC_LIBS_PRIVATE "-lpthread -lm -ldl")
if(FLYSIM_HAVE_CUDA)
  set(FLYSIM_PC_LIBS_PRIVATE "${FLYSIM_PC_LIBS_PRIVATE} -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
configure_file(cmake/flysim.pc.in "${PROJECT_BINARY_DIR}/flysim.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/flysim.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
