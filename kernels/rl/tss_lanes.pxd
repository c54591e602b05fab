# The lockstep fast path of the TSS Cython step twin (kernels/rl/tss_lanes.h); inline only.
cimport cython
from libc.stdint cimport int8_t, int64_t, uint8_t, uint32_t, uint64_t

from rl._stream_cy cimport AHEAD_ENVS


cdef extern from "rl/tss_lanes.h" nogil:
    uint64_t tss_step_lanes(const int64_t* iparams, const uint64_t* seeds, int64_t* state, const int64_t* actions,
                            const int64_t* policies, double shaping, float* obs, float* reward, uint8_t* terminated,
                            uint8_t* truncated, int8_t* mask, int64_t count, const uint32_t* ahead)


cdef inline int64_t tss_lanes(const int64_t[::1] iparams, int64_t[:, ::1] state, const int64_t[:, ::1] actions,
                              const int64_t[::1] policies, double shaping, float[:, :, ::1] obs,
                              float[:, ::1] reward, uint8_t[::1] terminated, uint8_t[::1] truncated,
                              int8_t[:, :, ::1] mask, Py_ssize_t first, const uint32_t* ahead,
                              const uint64_t[::1] seeds=None) noexcept nogil:
    # Steps some of envs first .. first + AHEAD_ENVS - 1 as the shared body would; returns them as bits.
    # With the seeds the lanes draw the blocks past the step's first (and a resetting env's first
    # block) themselves; without (tss_lanes_alone, whose call the generator shares with the other
    # rulesets) a step that needs them goes to the body.
    cdef Py_ssize_t count = min(state.shape[0] - first, AHEAD_ENVS)
    cdef const uint64_t* keys = NULL
    with cython.boundscheck(False), cython.wraparound(False):  # no file-wide directives in a .pxd
        if seeds is not None:
            keys = &seeds[first]
        return <int64_t>tss_step_lanes(&iparams[0], keys, &state[first, 0], &actions[first, 0], &policies[0],
                                       shaping, &obs[first, 0, 0], &reward[first, 0], &terminated[first],
                                       &truncated[first], &mask[first, 0, 0], count, ahead)
