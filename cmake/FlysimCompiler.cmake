# Compiler settings shared by every flysim target: warnings, -Werror on request,
# and the sanitizer build (ASan + UBSan) the tests must run clean under.

option(FLYSIM_WERROR "Treat compiler warnings as errors" OFF)
option(FLYSIM_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

add_library(flysim_warnings INTERFACE)
target_compile_options(flysim_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
                          -Wmissing-prototypes -Wformat=2 -Wundef -Wvla>
  $<$<AND:$<COMPILE_LANGUAGE:C>,$<BOOL:${FLYSIM_WERROR}>>:-Werror>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${FLYSIM_WERROR}>>:-Werror=all-warnings>)

if(FLYSIM_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:${_san}>")
  add_link_options(${_san})
endif()
