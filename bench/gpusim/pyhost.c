// pyhost: Python's interpreter as a program the GPU simulator runs (bench/gpusim/gpusim_check.sh,
// the Python module's device arrays).
//
// GPGPU-Sim judges a process by its executable (/proc/self/exe): a path holding "python"
// is taken for PyTorch and its CUDA version is never read, so CUDA 13's device properties
// and function attributes get CUDA 11's layout; any other executable must link
// libcudart.so.N, whose N (ldd) is that version. This one links libcudart (the simulator's
// at run time) and is Python's main. The PTX the simulator runs is then the module's:
// PYTORCH_BIN names the file cuobjdump reads (the flysim module, a shared library).
//   cc pyhost.c -I<Python's include> -L<its lib> -lpython3.X -Wl,--no-as-needed -lcudart
#include <Python.h>

int main(int argc, char** argv) {
  return Py_BytesMain(argc, argv);
}
