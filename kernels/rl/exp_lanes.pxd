# The lockstep fast path of the EXP Cython step twin (kernels/rl/exp_lanes.h); inline only.
cimport cython
from libc.stdint cimport int8_t, int64_t, uint8_t, uint32_t, uint64_t

from rl._stream_cy cimport AHEAD_ENVS


cdef extern from "rl/exp_lanes.h" nogil:
    uint64_t exp_step_lanes(const int64_t* iparams, int64_t* state, const int64_t* actions, const int64_t* policies,
                            double shaping, float* obs, float* reward, uint8_t* terminated, uint8_t* truncated,
                            int8_t* mask, int64_t count, const uint32_t* ahead)


cdef inline int64_t exp_lanes(const int64_t[::1] iparams, int64_t[:, ::1] state, const int64_t[:, ::1] actions,
                              const int64_t[::1] policies, double shaping, float[:, :, ::1] obs,
                              float[:, ::1] reward, uint8_t[::1] terminated, uint8_t[::1] truncated,
                              int8_t[:, :, ::1] mask, Py_ssize_t first, const uint32_t* ahead) noexcept nogil:
    # Steps some of envs first .. first + AHEAD_ENVS - 1 as the shared body would; returns them as bits.
    cdef Py_ssize_t count = min(state.shape[0] - first, AHEAD_ENVS)
    with cython.boundscheck(False), cython.wraparound(False):  # no file-wide directives in a .pxd
        return <int64_t>exp_step_lanes(&iparams[0], &state[first, 0], &actions[first, 0], &policies[0], shaping,
                                       &obs[first, 0, 0], &reward[first, 0], &terminated[first], &truncated[first],
                                       &mask[first, 0, 0], count, ahead)
