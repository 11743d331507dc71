# The version header (common/api/version.h.in): the project's version and the commit of the
# source tree, "+g<commit>", with ".dirty" when tracked files differ from it. Run at
# configure time and again by every build (the flysim_version target, in script mode),
# so that a build tree's version names the commit it was built from rather than the one
# it was configured at; the header is rewritten only when its text changes.
#   cmake -DSOURCE_DIR=... -DOUT=... -DPROJECT_VERSION=... [-DGIT=git] -P FlysimVersion.cmake
set(FLYSIM_GIT_SUFFIX "")
if(GIT)
  execute_process(COMMAND "${GIT}" rev-parse --short HEAD WORKING_DIRECTORY "${SOURCE_DIR}"
                  OUTPUT_VARIABLE _rev RESULT_VARIABLE _rc OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET)
  if(_rc EQUAL 0 AND _rev)
    set(FLYSIM_GIT_SUFFIX "+g${_rev}")
    execute_process(COMMAND "${GIT}" diff --quiet HEAD -- WORKING_DIRECTORY "${SOURCE_DIR}"
                    RESULT_VARIABLE _dirty OUTPUT_QUIET ERROR_QUIET)
    if(_dirty EQUAL 1)
      string(APPEND FLYSIM_GIT_SUFFIX ".dirty")
    endif()
  endif()
endif()
configure_file("${SOURCE_DIR}/common/api/version.h.in" "${OUT}" @ONLY)
