"""Declares the Cython extensions; everything else lives in pyproject.toml.

Kernels compile with -O3. Set COMBATSIM_NATIVE=1 when building from source to add
-march=native (faster on the build machine, not portable to older CPUs). Cython translates and the
compiler builds the extensions on every core (a serial build was most of a fresh install's time).
Every extension depends on every header, .pxd and .pxi under kernels/, so editing one rebuilds
what includes it (setuptools otherwise compares only the generated .c with the built module).
"""

import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

compile_args = ["-O3"]
if os.environ.get("COMBATSIM_NATIVE", "") not in ("", "0"):
    compile_args.append("-march=native")


SHARED_SOURCES = sorted(str(path) for pattern in ("*.h", "*.pxd", "*.pxi") for path in Path("kernels").rglob(pattern))


def extension(pyx: Path) -> Extension:
    module = "combatsim." + ".".join(pyx.with_suffix("").parts)
    return Extension(
        module,
        [str(pyx)],
        depends=SHARED_SOURCES,
        include_dirs=[numpy.get_include(), "kernels"],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )


cores = os.cpu_count() or 1

setup(
    ext_modules=cythonize(
        [extension(pyx) for pyx in sorted(Path("kernels").rglob("*.pyx"))],
        include_path=["kernels"],
        compiler_directives={"language_level": 3},
        nthreads=cores,
    ),
    options={"build_ext": {"parallel": cores}},
)
