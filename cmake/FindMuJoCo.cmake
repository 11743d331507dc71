# FindMuJoCo: MuJoCo's C library and headers.
#
# Looked for, in order:
#   1. MUJOCO_ROOT (cache or environment): a MuJoCo release folder with
#      include/mujoco/mujoco.h and lib/libmujoco.so*;
#   2. the `mujoco` wheel in the project's Python venv (FLYSIM_VENV, default
#      <source>/.venv), which ships mujoco/include and a versioned
#      mujoco/libmujoco.so.X.Y.Z (scripts/setup.sh installs the pinned one);
#   3. the `mujoco` wheel of Python_EXECUTABLE (a pip build's environment), the one the
#      Python module then loads beside `import mujoco`.
#
# Defines the imported target MuJoCo::MuJoCo and MuJoCo_FOUND, MuJoCo_VERSION,
# MuJoCo_INCLUDE_DIR, MuJoCo_LIBRARY.

set(MUJOCO_ROOT "$ENV{MUJOCO_ROOT}" CACHE PATH "MuJoCo release folder (optional)")
set(FLYSIM_VENV "${PROJECT_SOURCE_DIR}/.venv" CACHE PATH
    "Python venv whose mujoco wheel provides libmujoco and its headers")

set(_mujoco_hints "")
if(MUJOCO_ROOT)
  list(APPEND _mujoco_hints "${MUJOCO_ROOT}")
endif()
file(GLOB _mujoco_wheels "${FLYSIM_VENV}/lib/python3*/site-packages/mujoco")
list(APPEND _mujoco_hints ${_mujoco_wheels})
if(Python_EXECUTABLE)
  execute_process(COMMAND "${Python_EXECUTABLE}" -c
                          "import mujoco, os; print(os.path.dirname(mujoco.__file__))"
                  OUTPUT_VARIABLE _mujoco_python OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_mujoco_python)
    list(APPEND _mujoco_hints "${_mujoco_python}")
  endif()
endif()

find_path(MuJoCo_INCLUDE_DIR mujoco/mujoco.h
  HINTS ${_mujoco_hints} PATH_SUFFIXES include NO_DEFAULT_PATH)

set(MuJoCo_LIBRARY "" CACHE FILEPATH "libmujoco shared library")
if(NOT MuJoCo_LIBRARY)
  foreach(_dir IN LISTS _mujoco_hints)
    file(GLOB _candidates "${_dir}/libmujoco.so*" "${_dir}/lib/libmujoco.so*")
    if(_candidates)
      list(SORT _candidates)
      list(GET _candidates 0 _first)
      set(MuJoCo_LIBRARY "${_first}" CACHE FILEPATH "libmujoco shared library" FORCE)
      break()
    endif()
  endforeach()
endif()

if(MuJoCo_INCLUDE_DIR AND EXISTS "${MuJoCo_INCLUDE_DIR}/mujoco/mujoco.h")
  file(STRINGS "${MuJoCo_INCLUDE_DIR}/mujoco/mujoco.h" _ver_line
       REGEX "^#define mjVERSION_HEADER [0-9]+")
  string(REGEX MATCH "[0-9]+$" _ver "${_ver_line}")
  math(EXPR _major "${_ver} / 1000000")
  math(EXPR _minor "(${_ver} / 1000) % 1000")
  math(EXPR _patch "${_ver} % 1000")
  set(MuJoCo_VERSION "${_major}.${_minor}.${_patch}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MuJoCo
  REQUIRED_VARS MuJoCo_LIBRARY MuJoCo_INCLUDE_DIR
  VERSION_VAR MuJoCo_VERSION
  REASON_FAILURE_MESSAGE
    "run scripts/setup.sh (it installs the pinned mujoco wheel into ${FLYSIM_VENV}), or pass -DMUJOCO_ROOT=<MuJoCo release folder>")

if(MuJoCo_FOUND AND NOT TARGET MuJoCo::MuJoCo)
  add_library(MuJoCo::MuJoCo SHARED IMPORTED)
  get_filename_component(_soname "${MuJoCo_LIBRARY}" NAME)
  set_target_properties(MuJoCo::MuJoCo PROPERTIES
    IMPORTED_LOCATION "${MuJoCo_LIBRARY}"
    IMPORTED_SONAME "${_soname}"
    INTERFACE_INCLUDE_DIRECTORIES "${MuJoCo_INCLUDE_DIR}")
  get_filename_component(MuJoCo_LIBRARY_DIR "${MuJoCo_LIBRARY}" DIRECTORY)
endif()
mark_as_advanced(MuJoCo_INCLUDE_DIR MuJoCo_LIBRARY)
