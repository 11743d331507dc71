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

# A sanitized Debug build (scripts/test.sh --sanitize) compiles at -O1, not Debug's -O0:
# AddressSanitizer's documented level for a usable speed, its checks the same; asserts
# stay on (Debug defines no NDEBUG).
if(FLYSIM_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:${_san}>"
                      "$<$<AND:$<COMPILE_LANGUAGE:C>,$<CONFIG:Debug>>:-O1>")
  add_link_options(${_san})
endif()

# tests/fuzz's targets as libFuzzer programs (a developer's longer fuzzing; clang, with
# FLYSIM_SANITIZE for the sanitizers): coverage instrumentation everywhere, libFuzzer's
# main in the targets. Off: each target is a ctest with its own mutation loop.
option(FLYSIM_LIBFUZZER "Build tests/fuzz's targets as libFuzzer programs (clang)" OFF)
if(FLYSIM_LIBFUZZER)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "FLYSIM_LIBFUZZER needs clang (CC=clang); this is ${CMAKE_C_COMPILER_ID}")
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C>:-fsanitize=fuzzer-no-link>")
endif()

# The host code's instruction set: x86-64 with AVX (VEX encoding: three-operand arithmetic,
# 256-bit vectors), the level MuJoCo's own builds require (the mujoco wheel that flysim
# links is built with it), so that the cpu backend and the host stepper run on the same
# CPUs. Never FMA nor -march=native: a fused multiply-add rounds once where MuJoCo rounds
# twice, and the host stepper's float64 results are MuJoCo's bit for bit; contraction is
# held off explicitly. OFF (or a compiler or CPU family without -mavx): the compiler's
# default instruction set. The device code is nvcc's and does not change.
option(FLYSIM_AVX "Compile the host C code for x86-64 with AVX (as MuJoCo's builds), without FMA" ON)
if(FLYSIM_AVX AND CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  include(CheckCCompilerFlag)
  check_c_compiler_flag(-mavx FLYSIM_CC_HAS_MAVX)
  if(FLYSIM_CC_HAS_MAVX)
    add_compile_options("$<$<COMPILE_LANGUAGE:C>:-mavx;-ffp-contract=off>")
  endif()
endif()
