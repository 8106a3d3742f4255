"""Build step beyond pyproject.toml: tapegrad's C kernels (tapegrad/_ckernels/kernels.c).

An optional extension: when it cannot be built (no C compiler, no glibc vector math
library), the install goes on and tapegrad runs its NumPy kernels. The library is a plain
shared object loaded through ctypes (tapegrad/_ckernels/__init__.py), not a Python
module: it is named tapegrad/_ckernels/libkernels.so.1, a name that neither an import nor
pkgutil's walk over tapegrad takes for a module (their suffixes end in .so).
"""
import hashlib
import os

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildSharedLibrary(build_ext):
    """build_ext naming the library <package>/lib<name>.so.1 (not the extension module
    name <package>/<name>.cpython-*.so)."""

    def get_ext_filename(self, fullname):
        *package, name = fullname.split(".")
        return os.path.join(*package, f"lib{name}.so.1")


SOURCE = "tapegrad/_ckernels/kernels.c"
with open(SOURCE, "rb") as f:
    # the library answers tg_source_sha256() with this: the loader refuses a library
    # built from another kernels.c (an editable checkout pulled but not rebuilt)
    DIGEST = hashlib.sha256(f.read()).hexdigest()

setup(cmdclass={"build_ext": BuildSharedLibrary}, ext_modules=[Extension(
    "tapegrad._ckernels.kernels",
    sources=[SOURCE],
    define_macros=[("TG_SOURCE_SHA256", f'"{DIGEST}"')],
    # why each flag: kernels.c's top comment
    extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math",
                        "-fopenmp-simd"],
    libraries=["mvec", "m"],
    optional=True,
)])
