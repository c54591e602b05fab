# The clone-level hook of a Cython module whose C passes are built as clones (kernels/clones.h):
# included by every such module, and driven for all of them at once by combatsim.kernels.clones.
cdef extern from "clones.h" nogil:
    int combatsim_cpu_level()
    int combatsim_level()
    int combatsim_set_clone_cap(int cap)


def _clone_level(cap=None):
    """The level (0 portable, 1 AVX2, 2 x86-64-v4) this module's passes run at now; ``cap`` (-1: none)
    caps it first. ``_clone_level("cpu")`` is the highest level this CPU and build run."""
    if cap == "cpu":
        return combatsim_cpu_level()
    if cap is not None:
        return combatsim_set_clone_cap(cap)
    return combatsim_level()


from combatsim.kernels.clones import check_environment as _check_clone_environment

_check_clone_environment()
