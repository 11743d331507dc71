# libflysim: the object libraries of common/ (base, model, api), cpu/ (the cpu and host
# backends) and cuda/ (the cuda backend) joined into one static and one shared library,
# both named libflysim (FLYSIM_LIBRARY_OBJECTS, a global property each folder appends to).
get_property(FLYSIM_LIBRARY_OBJECTS GLOBAL PROPERTY FLYSIM_LIBRARY_OBJECTS)
set(_objs)
foreach(o ${FLYSIM_LIBRARY_OBJECTS})
  list(APPEND _objs $<TARGET_OBJECTS:${o}>)
endforeach()
add_library(flysim_static STATIC ${_objs})
add_library(flysim_shared SHARED ${_objs})
foreach(t flysim_static flysim_shared)
  set_target_properties(${t} PROPERTIES OUTPUT_NAME flysim LINKER_LANGUAGE C
                        POSITION_INDEPENDENT_CODE ON C_VISIBILITY_PRESET hidden)
  target_include_directories(${t} PUBLIC "$<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>"
                             "$<INSTALL_INTERFACE:include>")
  target_link_libraries(${t} PUBLIC MuJoCo::MuJoCo PRIVATE Threads::Threads m ${CMAKE_DL_LIBS})
endforeach()
# CUDA's runtime linked into the shared library (and kept to itself): it loads on a machine
# without a CUDA install, where the cuda backend says no GPU is there (FLYSIM_CUDART_SHARED:
# the shared libcudart instead, for the GPU simulator)
if(FLYSIM_HAVE_CUDA)
  target_link_libraries(flysim_shared PRIVATE ${FLYSIM_CUDART})
  target_link_options(flysim_shared PRIVATE -Wl,--exclude-libs,ALL)
endif()
set_target_properties(flysim_shared PROPERTIES VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
# a static library's users link what it needs itself
target_link_libraries(flysim_static INTERFACE Threads::Threads m ${CMAKE_DL_LIBS})
if(FLYSIM_HAVE_CUDA)
  target_link_libraries(flysim_static INTERFACE CUDA::cudart)
endif()

# flysim_internal: the static library with every internal header reachable, for the
# verbs and the tests (what is not public stays out of include/).
add_library(flysim_internal INTERFACE)
target_link_libraries(flysim_internal INTERFACE flysim_static flysim_includes)
if(FLYSIM_HAVE_CUDA)
  target_compile_definitions(flysim_internal INTERFACE FLYSIM_WITH_CUDA=1)
  target_link_libraries(flysim_internal INTERFACE CUDA::cudart)
endif()

