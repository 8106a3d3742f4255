"""Build step beyond pyproject.toml: tapegrad's C kernels (tapegrad/_ckernels/kernels.c).

An optional extension: when it cannot be built (no C compiler, no glibc vector math
library), the install goes on and tapegrad runs its NumPy kernels. The library is a plain
shared object loaded through ctypes (tapegrad/_ckernels/__init__.py), not a Python module.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension(
    "tapegrad._ckernels._lib",
    sources=["tapegrad/_ckernels/kernels.c"],
    # why each flag: kernels.c's top comment
    extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
                        "-fopenmp-simd"],
    libraries=["mvec", "m"],
    optional=True,
)])
