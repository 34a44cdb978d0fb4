# SPDX-License-Identifier: MIT
"""The cffi binding of libfftd (ABI mode): the C declarations of include/fftd.h that the
package uses, the loaded library, and ``check``, which turns a failed call's code into
the Python exception of :mod:`fftd.errors`.

This is the only module that talks to C. The library is found, in order, at
``$FFTD_LIB`` (a path to ``libfftd.so``), next to this package (``fftd/libfftd.so``, as a
wheel may ship it), then by the system's loader (``libfftd.so.0``, ``libfftd.so``).
Structs the caller allocates are passed with their sizeof to the ``_sized`` calls, as
the ABI paragraph of fftd.h asks bindings to do.
"""
from __future__ import annotations

import os
from pathlib import Path

from cffi import FFI

ffi = FFI()

# Enums are declared as int: their values are fixed by fftd.h's ABI rules and the C
# compiler gives them the size of an int.
ffi.cdef(
    """
typedef int fftd_kind;
typedef int fftd_precision;
typedef int fftd_direction;
typedef int fftd_norm;
typedef int fftd_priority;

const char *fftd_strerror(int err);
const char *fftd_err_name(int err);
const char *fftd_last_error(void);
const char *fftd_version(void);

typedef enum { FFTD_INPUT_NATIVE = 0, FFTD_INPUT_I8 = 1 } fftd_input_type;

typedef struct fftd_plan_desc {
    int rank;
    int64_t n[3];
    int64_t batch;
    fftd_kind kind;
    fftd_precision precision;
    fftd_direction direction;
    fftd_norm norm;
    int64_t inembed[3];
    int64_t istride;
    int64_t idist;
    int64_t onembed[3];
    int64_t ostride;
    int64_t odist;
    const char *algorithm;
    int device;
    fftd_priority priority;
    double tolerance;
    fftd_input_type input;
} fftd_plan_desc;

int fftd_plan_desc_init_sized(fftd_plan_desc *desc, size_t size, int rank,
    const int64_t *n, fftd_kind kind, fftd_precision precision);

typedef struct fftd_client fftd_client;
typedef struct fftd_plan fftd_plan;
typedef struct fftd_request fftd_request;
typedef struct fftd_buffer fftd_buffer;
typedef struct fftd_array fftd_array;
typedef struct fftd_stream fftd_stream;

int fftd_default_url(char *buf, size_t len);
int fftd_client_open(fftd_client **clientp, const char *url, int timeout_ms);
void fftd_client_close(fftd_client *client);

typedef struct fftd_device_info {
    int index;
    char name[64];
    char backend[16];
    uint64_t memory_bytes;
} fftd_device_info;

typedef struct fftd_info {
    uint32_t protocol_version;
    char server_version[32];
    char backend[16];
    int ndevices;
    fftd_device_info devices[16];
    int nalgorithms;
    char algorithms[8][16];
    uint32_t precisions;
    uint64_t max_request_bytes;
    uint32_t max_rank;
    uint64_t max_batch;
    uint32_t max_plans_per_client;
    uint32_t max_inflight_per_client;
    uint64_t max_queued_bytes_per_client;
    int ndaemons;
} fftd_info;

int fftd_client_info_sized(fftd_client *client, fftd_info *info, size_t size,
    size_t device_size);
int fftd_ping(fftd_client *client, double *rtt_us);

typedef struct fftd_stats {
    uint64_t uptime_ms, sessions, plans, requests, errors, bytes_in, bytes_out;
    uint64_t executes, cache_hits, cache_misses, cache_evictions, cache_entries;
    uint64_t cache_bytes, cache_budget_bytes, canceled, expired, stream_channels;
} fftd_stats;
int fftd_get_stats_sized(fftd_client *client, fftd_stats *stats, size_t size);

int fftd_plan_create_sized(fftd_client *client, const fftd_plan_desc *desc,
    size_t size, fftd_plan **planp);
void fftd_plan_destroy(fftd_plan *plan);
size_t fftd_plan_input_bytes(const fftd_plan *plan);
size_t fftd_plan_output_bytes(const fftd_plan *plan);
const char *fftd_plan_algorithm(const fftd_plan *plan);
int fftd_execute(const fftd_plan *plan, const void *in, void *out);

typedef void (*fftd_callback)(fftd_request *req, int status, void *data);
int fftd_execute_async(const fftd_plan *plan, const void *in, void *out,
    fftd_callback cb, void *data, fftd_request **reqp);
int fftd_request_cancel(fftd_request *req);
int fftd_request_done(fftd_request *req);
int fftd_request_wait(fftd_request *req);

int fftd_buffer_create(fftd_client *client, size_t bytes, fftd_buffer **bufp);
void *fftd_buffer_data(const fftd_buffer *buf);
size_t fftd_buffer_size(const fftd_buffer *buf);
void fftd_buffer_destroy(fftd_buffer *buf);

int fftd_array_create(fftd_client *client, int device, size_t bytes,
    fftd_array **arrp);
size_t fftd_array_size(const fftd_array *arr);
int fftd_array_device(const fftd_array *arr);
int fftd_array_write(fftd_array *arr, size_t offset, const void *src, size_t len);
int fftd_array_read(fftd_array *arr, size_t offset, void *dst, size_t len);
void fftd_array_destroy(fftd_array *arr);
int fftd_execute_arrays(const fftd_plan *plan, fftd_array *in, size_t in_offset,
    fftd_array *out, size_t out_offset);

typedef enum { FFTD_MF_SIGMASQ_COMPUTE = 0, FFTD_MF_SIGMASQ_STORE = 1,
               FFTD_MF_SIGMASQ_USE = 2 } fftd_mf_sigmasq;
typedef struct fftd_mf_desc {
    int64_t n;
    fftd_precision precision;
    double delta_f;
    int64_t kmin, kmax;
    int64_t t_begin, t_end;
    double threshold;
    int64_t cluster;
    fftd_mf_sigmasq sigmasq_mode;
    fftd_array *sigmasq;
    size_t sigmasq_offset;
} fftd_mf_desc;
typedef struct fftd_mf_peak {
    double rho;
    int64_t t;
    double sigma;
    double z_re, z_im;
} fftd_mf_peak;
typedef struct fftd_mf_trigger {
    int64_t template_index;
    int64_t t;
    double rho;
    double z_re, z_im;
} fftd_mf_trigger;
int fftd_mf_desc_init_sized(fftd_mf_desc *desc, size_t size);
int fftd_mf_bank_sized(fftd_client *client, const fftd_mf_desc *desc,
    size_t desc_size, fftd_array *data, size_t data_offset, fftd_array *psd,
    size_t psd_offset, fftd_array *templates, size_t templates_offset,
    int64_t count, fftd_mf_peak *peaks, size_t peak_size,
    fftd_mf_trigger *triggers, size_t trigger_size, size_t max_triggers,
    size_t *ntriggers, size_t *ntotal, const int64_t *series_index, int nseries,
    void *series);

int fftd_stream_open(const fftd_plan *plan, int depth, fftd_stream **streamp);
void *fftd_stream_input(fftd_stream *stream);
int fftd_stream_submit(fftd_stream *stream, const void *in);
int fftd_stream_wait(fftd_stream *stream, void *out, const void **outp);
int fftd_stream_pending(const fftd_stream *stream);
void fftd_stream_close(fftd_stream *stream);
"""
)

# Constants of fftd.h (their values are part of the ABI).
C2C, R2C, C2R = 0, 1, 2
F64, F32, F16 = 0, 1, 2
FORWARD, INVERSE = -1, 1
NORM_NONE, NORM_BY_N, NORM_ORTHO = 0, 1, 2


def _candidates() -> list[str]:
    """Where libfftd is looked for, in order (see the module's docstring)."""
    out = []
    env = os.environ.get("FFTD_LIB")
    if env:
        out.append(env)
    here = Path(__file__).resolve().parent
    out.append(str(here / "libfftd.so"))
    out += ["libfftd.so.0", "libfftd.so"]
    return out


def _load():
    """dlopen the first libfftd of _candidates(); ImportError naming every try if none."""
    errors = []
    for name in _candidates():
        if "/" in name and not os.path.exists(name):
            errors.append(f"{name}: no such file")
            continue
        try:
            return ffi.dlopen(name)
        except OSError as e:  # not found or not loadable: try the next
            errors.append(f"{name}: {e}")
    raise ImportError("fftd: cannot load libfftd (set FFTD_LIB to its path): " + "; ".join(errors))


lib = _load()


def last_error() -> str:
    """The detailed message of the calling thread's last failed fftd_* call ("" if none)."""
    return ffi.string(lib.fftd_last_error()).decode("utf-8", "replace")


def check(rv: int, what: str = "") -> None:
    """Raise the fftd.errors exception for code rv (with the library's message) unless 0."""
    if rv != 0:
        from .errors import error_from_code

        raise error_from_code(rv, last_error(), what)
