// SPDX-License-Identifier: MIT
//
// fftd.h — the public interface of libfftd, the client library of the fftd
// GPU FFT service. This is the only public header of the project: every other
// header in the tree is private and may change without notice.
//
// Model: a client connects to the daemon, creates plans (FFTW's "advanced"
// plan_many layout: rank, sizes, batch, strides, distances, embedded sizes),
// executes them on its own buffers any number of times, and destroys them.
// Plan → execute(const plan) → destroy, as in FFTW and cuFFT.
//
// Conventions (FFTW's and numpy's):
//   - forward is exp(-2πi jk/n) (FFTD_FORWARD = -1), inverse exp(+2πi jk/n);
//   - transforms are unnormalized unless the plan asks for FFTD_NORM_BY_N
//     (scale by 1/N, N the product of the logical sizes) or FFTD_NORM_ORTHO
//     (scale by 1/sqrt(N)); the scale applies to the plan's own direction;
//   - complex elements are interleaved (re, im) pairs of the plan's precision:
//     f64 = 2 x double, f32 = 2 x float, f16 = 2 x IEEE-754 binary16 (bits
//     passed as uint16_t);
//   - for R2C and C2R, n[] holds the logical (real) sizes; the complex side
//     has n[rank-1]/2 + 1 elements along the last dimension (FFTW's r2c).
//
// Errors: every call that can fail returns an int that is FFTD_OK (0) or a
// negative-free fftd_error code; fftd_strerror() names it, and
// fftd_last_error() gives the daemon's detailed message for the calling
// thread's last failure. Codes of the tagged ranges (FFTD_ESYSERR, ...) carry
// the underlying OS / NNG / CUDA / cuFFT code in their low bits.
//
// Threads: an fftd_client and its plans may be used from any number of
// threads at once; every function here is thread-safe except that a plan
// must not be destroyed while another thread executes it, a client must
// not be closed while its plans are in use, and an fftd_stream is driven
// by one thread at a time (its slot ring has no lock).
//
// Fork: in a process forked after its first fftd_client_open, libfftd
// cannot reach a daemon (NNG, which carries its connections, is not
// fork-safe): there every call that would fails with FFTD_EUNSUPPORTED
// (fftd_last_error says why), fftd_stream_input returns NULL (a stream's
// slots are shared with the parent), fftd_request_done returns 1, and the
// close and destroy calls make no daemon call (plans and arrays free the
// child's copy of their handle; clients, buffers and streams are left as
// they are). A process forked before that is not affected.

#ifndef FFTD_H
#define FFTD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// FFTD_API marks the calls libfftd exports, as NNG_DECL and UV_EXTERN do:
// the library is built with -fvisibility=hidden and a linker version script
// (client/libfftd.map, version node FFTD_0), so that a program sees these
// calls and nothing else of it; tests/symbols.sh checks that libfftd.so
// exports exactly the names declared FFTD_API here.
#if defined(__GNUC__) || defined(__clang__)
#define FFTD_API __attribute__((visibility("default")))
#else
#define FFTD_API
#endif

// Binary compatibility (ABI). The shared library's soname is libfftd.so.0,
// and FFTD_VERSION_MAJOR is its number.
//
// Structs the caller allocates (fftd_plan_desc, fftd_info, fftd_device_info,
// fftd_stats, fftd_client_stats, fftd_device_stats, fftd_algorithm_stats,
// fftd_speed_entry, fftd_exec_options, fftd_stream_times, fftd_mf_desc,
// fftd_mf_peak, fftd_mf_trigger) may grow in later versions. The calls that
// take one are macros that pass the library the sizeof the caller was compiled
// with (fftd_get_stats(c, s) is fftd_get_stats_sized(c, s, sizeof(fftd_stats));
// arrays and the devices inside fftd_info pass their element's sizeof too), so
// a program built against an older fftd.h keeps working with a newer library
// and the reverse: the library reads and writes only the bytes the caller's
// struct has; a field the caller's struct lacks reads as its default (as
// fftd_plan_desc_init sets it; zero, or none, elsewhere); bytes of a caller's
// struct that the library does not know are ignored on input and zeroed on
// output. A size of 0, not a multiple of 4, or over 64 KiB is FFTD_EINVAL.
// Bindings that call the library directly call the _sized symbols with their
// structs' sizes.
//
// Within libfftd.so.0: calls and enum values are only added; a struct grows
// only at its end, each new field starting at or after the previous version's
// sizeof, with a default that keeps the old behaviour. What bumps the soname
// (libfftd.so.1, FFTD_VERSION_MAJOR 1): removing an exported call or changing
// its arguments or meaning; removing, moving or retyping a struct's field;
// changing a constant that sizes an array inside a struct (FFTD_MAX_RANK,
// FFTD_MAX_DEVICES, FFTD_MAX_ALGORITHMS, FFTD_HIST_BUCKETS, the name lengths);
// changing the value of an enum constant or error code. The wire protocol
// (FFTD_PROTOCOL_VERSION) is versioned on its own.

#define FFTD_VERSION_MAJOR 0
#define FFTD_VERSION_MINOR 1
#define FFTD_VERSION_PATCH 0
// FFTD_PROTOCOL_VERSION is the wire protocol version this library speaks.
#define FFTD_PROTOCOL_VERSION 1
// FFTD_MAX_RANK is the largest transform rank (1, 2 or 3).
#define FFTD_MAX_RANK 3

// FFTD_ERRNO_MAP is the one table of error codes: X(name, value, message).
// It yields the fftd_error enum, fftd_strerror() and fftd_err_name().
#define FFTD_ERRNO_MAP(X)                                                      \
	X(OK, 0, "success")                                                    \
	X(EINVAL, 1, "invalid argument")                                       \
	X(ENOMEM, 2, "out of memory")                                          \
	X(EUNSUPPORTED, 3, "transform not supported by the chosen backend")    \
	X(ELIMIT, 4, "request exceeds a configured limit")                     \
	X(EOVERFLOW, 5, "size arithmetic overflows")                           \
	X(ESIZE, 6, "payload length does not match the plan's layout")         \
	X(ENOPLAN, 7, "no such plan on this connection")                       \
	X(EPROTO, 8, "malformed or unexpected message")                        \
	X(EVERSION, 9, "protocol version not supported")                       \
	X(ETIMEDOUT, 10, "timed out")                                          \
	X(ECLOSED, 11, "connection closed")                                    \
	X(ECONNREFUSED, 12, "no daemon listening at that address")             \
	X(ESHUTDOWN, 13, "daemon is shutting down")                            \
	X(EBACKEND, 14, "backend failed to plan or execute")                   \
	X(EBUSY, 15, "operation still in progress")                            \
	X(ENODEVICE, 16, "no such device")                                     \
	X(EDEVMEM, 17, "not enough device memory for this request")            \
	X(EINTERNAL, 18, "internal error")                                     \
	X(EDEADLINE, 19, "deadline passed before the transform could start")   \
	X(ECANCELED, 20, "request canceled")                                   \
	X(EREFUSED, 21, "connection refused by the daemon's configuration")

// fftd_error lists the error codes. Codes at or above FFTD_ESYSERR are
// tagged: the range says where the code came from and the low 24 bits hold
// that subsystem's own code (errno, nng_err, cudaError_t, cufftResult).
typedef enum fftd_error {
#define FFTD__ENUM(name, value, msg) FFTD_##name = value,
	FFTD_ERRNO_MAP(FFTD__ENUM)
#undef FFTD__ENUM
	    FFTD_ESYSERR
	= 0x10000000,                // + errno
	FFTD_ENNGERR   = 0x20000000, // + nng error
	FFTD_ECUDAERR  = 0x30000000, // + cudaError_t
	FFTD_ECUFFTERR = 0x40000000, // + cufftResult
} fftd_error;

#define FFTD_ERR_RANGE_MASK 0x70000000
#define FFTD_ERR_CODE_MASK 0x00ffffff

// fftd_strerror returns a static, human-readable message for any code,
// tagged codes included. It never returns NULL.
FFTD_API const char *fftd_strerror(int err);

// fftd_err_name returns the code's symbolic name ("FFTD_EINVAL"), or
// "FFTD_ESYSERR" etc. for tagged codes, or "FFTD_EUNKNOWN".
FFTD_API const char *fftd_err_name(int err);

// fftd_last_error returns the detailed message that came with the calling
// thread's last failed fftd_* call (often the daemon's own words, e.g.
// "n[1] = 0: sizes must be positive"), or "" if there is none. The string is
// owned by the library and valid until this thread's next fftd_* call.
FFTD_API const char *fftd_last_error(void);

// fftd_version returns the library version as "MAJOR.MINOR.PATCH".
FFTD_API const char *fftd_version(void);

// fftd_kind is the transform kind.
typedef enum fftd_kind {
	FFTD_C2C = 0, // complex to complex
	FFTD_R2C = 1, // real to complex (forward only), Hermitian half output
	FFTD_C2R = 2, // complex to real (inverse only), Hermitian half input
} fftd_kind;

// fftd_precision is the storage and arithmetic precision of a plan.
typedef enum fftd_precision {
	FFTD_F64 = 0, // double
	FFTD_F32 = 1, // float
	FFTD_F16 = 2, // IEEE binary16 storage (GPU backends only)
} fftd_precision;

// fftd_input_type is the type of a plan's input (fftd_plan_desc.input).
typedef enum fftd_input_type {
	FFTD_INPUT_NATIVE = 0, // the plan's precision
	FFTD_INPUT_I8     = 1, // signed 8-bit integers (radio voltages)
} fftd_input_type;

// fftd_direction is the sign of the exponent, as FFTW's FFTW_FORWARD and
// FFTW_BACKWARD.
typedef enum fftd_direction {
	FFTD_FORWARD = -1,
	FFTD_INVERSE = +1,
} fftd_direction;

// fftd_norm is the scaling applied after the transform (numpy's meanings:
// BY_N is 1/N, ORTHO is 1/sqrt(N), with N the product of the logical sizes).
typedef enum fftd_norm {
	FFTD_NORM_NONE  = 0,
	FFTD_NORM_BY_N  = 1,
	FFTD_NORM_ORTHO = 2,
} fftd_norm;

// fftd_priority is the scheduling class of a plan's executions. On each
// device the daemon keeps a queue per client and class; it starts realtime
// work before any batch work, and shares device time among the clients of
// one class in proportion to their weights (configured per user, default 1)
// by start-time fair queueing on measured device time. A transform is
// never preempted once started, so a realtime request may wait for the
// batch transform in progress (bounded by the daemon's pipeline chunk).
typedef enum fftd_priority {
	FFTD_PRIORITY_BATCH    = 0, // throughput work (default)
	FFTD_PRIORITY_REALTIME = 1, // streaming pipelines: latency first
} fftd_priority;

// fftd_plan_desc describes a batched transform in FFTW's advanced layout
// (fftw_plan_many_dft): element (j_0 .. j_{rank-1}) of transform b of the
// input lives at element index
//     b * idist + istride * (j_0 * E_1 * ... * E_{rank-1} + ... + j_{rank-1})
// of the input array, E = inembed; likewise for the output with onembed,
// ostride, odist. Indices count elements of the side's type (real or
// complex of the plan's precision), not bytes.
//
// Zero means "default" for the layout fields: inembed/onembed all zero →
// the logical sizes of that side (n, or n with the last one n/2+1 on the
// complex side of R2C/C2R); istride/ostride 0 → 1; idist/odist 0 → the
// product of that side's embedded sizes times its stride (contiguous
// batch). Initialise with fftd_plan_desc_init() and change what you need.
typedef struct fftd_plan_desc {
	int            rank;             // 1 .. FFTD_MAX_RANK
	int64_t        n[FFTD_MAX_RANK]; // logical sizes, n[0] slowest varying
	int64_t        batch;            // number of transforms, >= 1
	fftd_kind      kind;             // C2C, R2C or C2R
	fftd_precision precision;        // F64, F32 or F16
	fftd_direction direction; // forced FORWARD for R2C, INVERSE for C2R
	fftd_norm      norm;      // scaling after the transform
	int64_t inembed[FFTD_MAX_RANK]; // input embedded sizes (0: default)
	int64_t istride;                // input stride (0: 1)
	int64_t idist;                  // input distance between transforms
	int64_t onembed[FFTD_MAX_RANK]; // output embedded sizes (0: default)
	int64_t ostride;                // output stride (0: 1)
	int64_t odist;                  // output distance between transforms
	// algorithm picks the implementation. NULL, "" or "auto" lets the
	// daemon choose: with tolerance 0 its backend's default (cuFFT on the
	// cuda backend, FFTW on the fftw backend), with tolerance > 0 the
	// fastest within it (see tolerance). A name asks for one:
	//   "fftw"    FFTW3 on the CPU (fftw backend): f64, f32; every kind,
	//             rank, size and layout.
	//   "cufft"   cuFFT (cuda backend): f64, f32, and f16 for power-of-two
	//             sizes; every kind, rank and layout.
	//   "tc16"    fftd's tensor-core kernels (cuda backend): f16 C2C, R2C
	//             and C2R, fp16 products, fp32 sums (relative L2 error
	//             <= ~4e-3, and no more than cuFFT f16's in the tests).
	//   "split16" the same kernels on fp32 data split into fp16 hi + lo
	//             (cuda backend): f32 C2C, R2C and C2R, fp32 accuracy
	//             (<= ~2e-6).
	// tc16 and split16 take power-of-two sizes: rank 1 (C2C n from 256,
	// R2C/C2R from 512, up to the kernels' limit, at least 2^24), rank 2
	// (each of n[0], n[1] = 256 .. 4096) or rank 3 (each side 32 .. 512;
	// R2C/C2R with n[2] >= 64), either direction, any norm and batch, in
	// a dense layout only: stride 1, no embedding (inembed/onembed zero or
	// equal to the side's sizes), distance the side's transform size; a
	// refusal states the limits. Real transforms run the complex
	// transform of half the length and a separate post/pre-processing
	// step (kernels/tc.h). fftd_info.algorithms lists what a daemon serves.
	// Errors at fftd_plan_create: a name the daemon does not serve, or a
	// plan the named algorithm cannot do (wrong precision, another size,
	// a strided or padded layout), fails with FFTD_EUNSUPPORTED and
	// fftd_last_error() saying why; fftd_plan_algorithm() names the one
	// chosen.
	const char *algorithm;
	// device pins the plan's executions to one device index; -1 lets the
	// daemon run each execution on the least-loaded device (planning
	// there on first use).
	int           device;
	fftd_priority priority; // scheduling class (FFTD_PRIORITY_BATCH)
	// tolerance is the error the caller accepts per transform: a bound on
	// the relative L2 error ||y - y_exact|| / ||y_exact|| of each transform
	// (y_exact the exact DFT of the input as given). 0 (the default, and
	// what an older caller's shorter struct reads as): the precision's
	// usual accuracy, as without this field. With algorithm "auto" and
	// tolerance > 0 the daemon runs the fastest algorithm whose error
	// bound at this size is within it, among those that serve the shape,
	// maybe at a lower precision than the data's (f32 data through
	// "tc16", f64 through "cufft-f32", "split16" or "fftw-f32": converted
	// on the way in and out, scaled by powers of two so that nothing
	// overflows, the conversions counted in the speed compared); the
	// data's own precision on its default algorithm is always a
	// candidate, so the choice is never slower than it (up to noise).
	// The bounds are the daemon's error table (fftctl info prints it),
	// from the kernels' measured errors with a margin; speeds are
	// measured once per device, shape and algorithm, on first use.
	// fftd_plan_algorithm() names the choice. A named algorithm ignores
	// tolerance. Errors at fftd_plan_create: negative, NaN or infinite:
	// FFTD_EINVAL.
	double tolerance;
	// input is the input's element type: FFTD_INPUT_NATIVE (default, and
	// what an older caller's shorter struct reads as) the precision's;
	// FFTD_INPUT_I8 signed bytes -128..127 for forward C2C ((re, im) int8
	// pairs, 2 bytes an element) and R2C (int8 reals, 1 byte), converted
	// exactly to the plan's precision, the output in it as usual; strides,
	// distances and embeddings count elements. cuda converts on the device
	// and takes dense layouts only (else FFTD_EUNSUPPORTED). Errors at
	// fftd_plan_create: C2R, inverse C2C or an unknown value: FFTD_EINVAL.
	fftd_input_type input;
} fftd_plan_desc;

// fftd_plan_desc_init fills *desc for a contiguous, forward (inverse for
// C2R), unnormalized, batch-1 transform of the given rank and sizes, with
// the layout fields zero (defaults), algorithm "auto", device -1,
// priority FFTD_PRIORITY_BATCH and tolerance 0. n must hold rank
// sizes. Returns FFTD_EINVAL if rank is outside 1..FFTD_MAX_RANK.
FFTD_API int fftd_plan_desc_init_sized(fftd_plan_desc *desc, size_t size,
    int rank, const int64_t *n, fftd_kind kind, fftd_precision precision);
#define fftd_plan_desc_init(desc, rank, n, kind, precision)                    \
	fftd_plan_desc_init_sized(                                             \
	    (desc), sizeof(fftd_plan_desc), (rank), (n), (kind), (precision))

// fftd_client is a connection to one daemon, or to several
// (fftd_client_open with a list of URLs).
typedef struct fftd_client fftd_client;
// fftd_plan is a plan held by the daemon for one client connection.
typedef struct fftd_plan fftd_plan;
// fftd_request is an execution in flight (fftd_execute_async).
typedef struct fftd_request fftd_request;

// fftd_default_url writes the address a client connects to when given
// NULL: $FFTD_URL if set (a URL or a list, see fftd_client_open); else the
// system service's socket ipc:///run/fftd/fftd.sock if it exists; else the
// per-user daemon's ipc://$XDG_RUNTIME_DIR/fftd.sock if that variable is set;
// else the system socket. Returns FFTD_ELIMIT if it does not fit in len bytes.
FFTD_API int fftd_default_url(char *buf, size_t len);

// FFTD_MAX_DAEMONS is the most URLs fftd_client_open takes in one list.
#define FFTD_MAX_DAEMONS 16

// fftd_client_open connects to the daemon at url (an NNG URL such as
// "ipc:///run/fftd/fftd.sock", "tcp://127.0.0.1:5555" or
// "tls+tcp://gpu1.lab:5555"; NULL for fftd_default_url()), performs the
// protocol handshake, and stores a new client in *clientp. timeout_ms
// bounds the connect and handshake and is also the timeout of every later
// call on this client (0: 60 s; -1: none).
//
// tls+tcp:// URLs take their TLS settings from the environment, read at
// each call:
//   FFTD_TLS_CA           PEM file of the CA(s) that signed the daemon's
//                         certificate; required (the daemon is verified).
//   FFTD_TLS_CERT         PEM file of this client's certificate (and its
//                         key when FFTD_TLS_KEY is unset); needed unless
//                         the daemon has require_client_cert = no.
//   FFTD_TLS_KEY          the client's unencrypted PEM private key.
//   FFTD_TLS_SERVER_NAME  the name the daemon's certificate must carry;
//                         default the URL's host. DNS names are matched,
//                         not IP addresses.
//
// Errors: FFTD_ECONNREFUSED (nobody listening), FFTD_ETIMEDOUT, FFTD_EVERSION
// (daemon speaks another protocol), FFTD_EINVAL (a bad URL list, or a TLS
// variable missing or its file unreadable or not PEM; fftd_last_error() names
// it), FFTD_ENNGERR+NNG_ECRYPTO, +NNG_ECONNSHUT or +NNG_EPEERAUTH (TLS
// handshake failed; the message says whether the daemon's certificate failed
// verification or the daemon refused the client's), FFTD_EREFUSED (the client's
// address is not in the daemon's [remote] allow; the message says which
// address), FFTD_ECLOSED (the daemon closed the connection), FFTD_ENNGERR+n.
//
// Several daemons (one per GPU server; README, "A lab with several GPU
// servers"): url may be a comma-separated list of up to FFTD_MAX_DAEMONS
// URLs (blanks around each ignored; an empty element or more URLs is
// FFTD_EINVAL). The open connects to each in order and fails, naming the
// URL, if any fails. fftd_plan_create makes the plan on every connected
// daemon at once (one refusal destroys the others' copies and returns that
// daemon's error and URL). Each execution goes to the daemon holding the
// plan with the fewest of this client's executions in flight;
// max_inflight_per_client holds per daemon. A daemon whose connection drops
// completes its executions in flight with FFTD_ECLOSED (never resent) and
// gets no more of them; plans made before the drop keep to the others
// (FFTD_ECLOSED, or FFTD_ENOPLAN, once none is left). fftd_client_info
// describes the first daemon with the limits, precisions and algorithms
// all share and ndaemons their number; fftd_ping and the statistics calls
// ask the first daemon; fftd_buffer_create and fftd_stream_open are
// FFTD_EUNSUPPORTED (payloads travel inline). With a single URL a lost
// connection is waited for (up to the timeout) and shared memory works.
FFTD_API int fftd_client_open(
    fftd_client **clientp, const char *url, int timeout_ms);

// fftd_client_close closes the connection (to every daemon of a list). The
// daemon then frees every plan of this client; plans still held must not be
// used afterwards, but must still be released with fftd_plan_destroy (which
// then only frees memory). Executions still in flight are first allowed to
// finish (their callbacks run with their real status) for up to the client's
// timeout, at most 10 s; those still unanswered then complete with
// FFTD_ECLOSED. Their callbacks have all returned when this function returns.
// Must not run concurrently with other calls on the same client.
FFTD_API void fftd_client_close(fftd_client *client);

// fftd_device_info describes one device the daemon serves.
typedef struct fftd_device_info {
	int      index;        // device index to use in fftd_plan_desc.device
	char     name[64];     // e.g. "NVIDIA H200" or "cpu (16 threads)"
	char     backend[16];  // "cuda" or "fftw"
	uint64_t memory_bytes; // device memory (0 for the CPU)
} fftd_device_info;

#define FFTD_MAX_DEVICES 16
#define FFTD_MAX_ALGORITHMS 8

// fftd_info is what the daemon reports of itself (fftd_client_info).
typedef struct fftd_info {
	uint32_t protocol_version;
	char     server_version[32];
	char     backend[16]; // default backend in use: "cuda" or "fftw"
	int      ndevices;
	fftd_device_info devices[FFTD_MAX_DEVICES];
	int              nalgorithms;
	char             algorithms[FFTD_MAX_ALGORITHMS]
	               [16];        // "fftw"; "cufft", "tc16", ...
	uint32_t precisions;        // bit (1 << fftd_precision) per precision
	uint64_t max_request_bytes; // largest payload accepted, bytes
	uint32_t max_rank;
	uint64_t max_batch;
	uint32_t max_plans_per_client;
	// Executions one connection may have queued or running; libfftd
	// holds further fftd_execute_async calls until one completes.
	uint32_t max_inflight_per_client;
	uint64_t max_queued_bytes_per_client; // inline input bytes queued
	// ndaemons is the number of daemons the client talks to: 1, or the
	// length of the URL list given to fftd_client_open. With several, the
	// fields above are the first daemon's, except the limits (the
	// smallest of all daemons'), precisions and algorithms (those every
	// daemon serves).
	int ndaemons;
} fftd_info;

// fftd_client_info copies the daemon's capabilities, as reported at
// handshake, into *info (see ndaemons for a client of several daemons).
// Never fails on an open client.
FFTD_API int fftd_client_info_sized(
    fftd_client *client, fftd_info *info, size_t size, size_t device_size);
#define fftd_client_info(client, info)                                         \
	fftd_client_info_sized(                                                \
	    (client), (info), sizeof(fftd_info), sizeof(fftd_device_info))

// fftd_ping sends a ping and stores the round trip in microseconds in
// *rtt_us (may be NULL).
FFTD_API int fftd_ping(fftd_client *client, double *rtt_us);

// Statistics. The fftd_get_*stats and fftd_get_speed_table calls ask the
// daemon (any thread) and fill caller-allocated structs; the list calls
// fill up to max entries of out and store in *n how many there are (all,
// possibly more than max), fetching every page of the daemon's answer
// (one reply holds at most 64 KiB). Errors: FFTD_EINVAL (client, stats or
// n NULL, max < 0, out NULL with max > 0, a bad size), the connection's,
// FFTD_EPROTO from a daemon that predates the call. Units: seconds, bytes.

// fftd_stats is a snapshot of the daemon's counters (fftd_get_stats).
typedef struct fftd_stats {
	uint64_t uptime_ms;
	uint64_t sessions;  // connected clients now
	uint64_t plans;     // client plans alive now
	uint64_t requests;  // requests answered since start
	uint64_t errors;    // requests answered with an error
	uint64_t bytes_in;  // input bytes of executions (inline or shared)
	uint64_t bytes_out; // output bytes of executions (inline or shared)
	uint64_t executes;  // transforms executed (requests, not batch)
	uint64_t cache_hits, cache_misses, cache_evictions, cache_entries;
	uint64_t cache_bytes; // bytes held by cached plans (workspace)
	uint64_t cache_budget_bytes;
	uint64_t canceled;        // executions dropped by cancel or disconnect
	uint64_t expired;         // executions not started by their deadline
	uint64_t stream_channels; // fftd_stream channels open now
} fftd_stats;

// fftd_get_stats fetches the daemon's counters into *stats.
FFTD_API int fftd_get_stats_sized(
    fftd_client *client, fftd_stats *stats, size_t size);
#define fftd_get_stats(client, stats)                                          \
	fftd_get_stats_sized((client), (stats), sizeof(fftd_stats))

// FFTD_HIST_BUCKETS: buckets of the latency histograms (queue, device).
#define FFTD_HIST_BUCKETS 20

// fftd_hist_bound returns the upper bound, in seconds, of histogram bucket
// i: 1e-5, 2.5e-5, 5e-5, 1e-4, ... 5, 10 (1-2.5-5 steps), and +Inf for the
// last bucket (i = FFTD_HIST_BUCKETS - 1). Prometheus's "le" bounds.
FFTD_API double fftd_hist_bound(int i);

// fftd_client_stats is one connected client as the daemon sees it.
// Histogram arrays hold counts per bucket (not cumulative).
typedef struct fftd_client_stats {
	uint32_t id;       // connection id, as FFTD_CLIENT= in the logs
	uint64_t pid, uid; // peer credentials (ipc://), else 0
	char     name[64]; // client name sent at handshake (program name)
	double   weight;   // fair-share weight (configured per user)
	uint64_t requests, errors; // answered requests, failed ones
	uint64_t executes;         // executions answered successfully
	uint64_t bytes_in, bytes_out;
	uint64_t canceled, expired;
	uint32_t inflight;       // executions queued or running now
	uint64_t queued_bytes;   // their inline input bytes
	double   queue_seconds;  // sum of time spent queued
	double   device_seconds; // sum of device time used
	uint64_t queue_hist[FFTD_HIST_BUCKETS];
	uint64_t device_hist[FFTD_HIST_BUCKETS];
} fftd_client_stats;

// fftd_device_stats is one device of the daemon. With the realtime lane
// ([backend] realtime_lane), the device's two workers are summed: busy
// time counts both (they may overlap), busy_fraction is capped at 1.
typedef struct fftd_device_stats {
	int      index;
	char     name[64];
	char     backend[16];
	uint64_t memory_bytes;      // device memory (0 for the CPU)
	uint64_t memory_used_bytes; // held by plans and buffers now
	double   busy_seconds;      // device time spent executing, total
	double   busy_fraction;     // busy share of the last ~10 s (0..1)
	uint32_t queued;            // jobs queued or running now
	uint64_t executes;
	uint64_t cache_hits, cache_misses, cache_evictions;
	uint64_t cache_entries, cache_bytes, cache_budget_bytes;
	uint64_t ipc_mappings; // client allocations mapped (CUDA IPC) now
} fftd_device_stats;

// fftd_get_client_stats lists the connected clients, by client id.
FFTD_API int fftd_get_client_stats_sized(
    fftd_client *client, fftd_client_stats *out, size_t size, int max, int *n);
#define fftd_get_client_stats(client, out, max, n)                             \
	fftd_get_client_stats_sized(                                           \
	    (client), (out), sizeof(fftd_client_stats), (max), (n))

// fftd_get_device_stats lists the devices.
FFTD_API int fftd_get_device_stats_sized(
    fftd_client *client, fftd_device_stats *out, size_t size, int max, int *n);
#define fftd_get_device_stats(client, out, max, n)                             \
	fftd_get_device_stats_sized(                                           \
	    (client), (out), sizeof(fftd_device_stats), (max), (n))

// fftd_algorithm_stats counts the plans made since the daemon started
// under one algorithm name, as fftd_plan_algorithm reports it.
typedef struct fftd_algorithm_stats {
	char     algorithm[16]; // "fftw", "fftw-f32", "cufft", "tc16", ...
	uint64_t plans;
} fftd_algorithm_stats;

// fftd_get_algorithm_stats lists the algorithms of the plans (16 at most).
FFTD_API int fftd_get_algorithm_stats_sized(fftd_client *client,
    fftd_algorithm_stats *out, size_t size, int max, int *n);
#define fftd_get_algorithm_stats(client, out, max, n)                          \
	fftd_get_algorithm_stats_sized(                                        \
	    (client), (out), sizeof(fftd_algorithm_stats), (max), (n))

// fftd_speed_entry is one time of the speed table plans with a tolerance
// choose by: a median of executions, per device, algorithm and shape.
typedef struct fftd_speed_entry {
	int    device;        // daemon device index
	char   key[16];       // the backend's plan key: "tc16-conv"
	char   algorithm[16]; // its reported name: "tc16"
	char   shape[64];     // "c2c fwd f32 64x64 batch 8"
	double seconds;       // one execution of the whole batch
} fftd_speed_entry;

// fftd_get_speed_table lists the speed table (at most 1,024 entries) in
// the daemon's slot order, and stores in *evictions (may be NULL) how many
// entries the full table dropped, least recently used first. An entry
// replaced while the pages are fetched may be missed.
FFTD_API int fftd_get_speed_table_sized(fftd_client *client,
    fftd_speed_entry *out, size_t size, int max, int *n, uint64_t *evictions);
#define fftd_get_speed_table(client, out, max, n, evictions)                   \
	fftd_get_speed_table_sized((client), (out), sizeof(fftd_speed_entry),  \
	    (max), (n), (evictions))

// fftd_plan_create asks the daemon for a plan described by *desc and stores
// a new handle in *planp. The daemon validates the description before it
// allocates anything (sizes > 0, overflow-checked products, its configured
// limits) and plans with the chosen backend, or reuses a cached plan.
// Errors: FFTD_EINVAL (bad description), FFTD_EOVERFLOW, FFTD_ELIMIT,
// FFTD_EUNSUPPORTED (e.g. f16 on the CPU, f16 non-power-of-two on cuFFT,
// a shape the named algorithm does not serve: see fftd_plan_desc),
// FFTD_EBACKEND, plus the connection's errors. desc is not retained.
FFTD_API int fftd_plan_create_sized(fftd_client *client,
    const fftd_plan_desc *desc, size_t size, fftd_plan **planp);
#define fftd_plan_create(client, desc, planp)                                  \
	fftd_plan_create_sized(                                                \
	    (client), (desc), sizeof(fftd_plan_desc), (planp))

// fftd_plan_destroy releases the plan in the daemon and frees the handle.
// NULL is ignored. Must not run while the plan is being executed.
FFTD_API void fftd_plan_destroy(fftd_plan *plan);

// fftd_plan_input_bytes is the size in bytes of the input array that
// fftd_execute reads: (largest input element index + 1) * element size.
FFTD_API size_t fftd_plan_input_bytes(const fftd_plan *plan);

// fftd_plan_output_bytes is the size in bytes of the output array span that
// fftd_execute writes into; only the elements of the output layout are
// written, others keep their values.
FFTD_API size_t fftd_plan_output_bytes(const fftd_plan *plan);

// fftd_plan_algorithm names the implementation the daemon chose ("fftw",
// "cufft", ...; on a client of several daemons, the first that holds the
// plan). The string lives as long as the plan.
FFTD_API const char *fftd_plan_algorithm(const fftd_plan *plan);

// fftd_execute runs the plan on in (fftd_plan_input_bytes bytes, read only)
// and writes out (only the output layout's elements), blocking until done.
// in and out may be the same buffer (in-place) if the layouts allow it, as
// in FFTW. Several threads may execute the same plan at once. Errors:
// FFTD_EINVAL (NULL buffers), FFTD_ENOPLAN (plan freed by a daemon restart),
// FFTD_ETIMEDOUT, FFTD_ECLOSED, FFTD_EBACKEND, FFTD_EDEVMEM, FFTD_ELIMIT
// (over the daemon's per-connection limits), FFTD_ESHUTDOWN (the daemon is
// stopping: the request arrived after it stopped taking work and was not
// run), FFTD_EDEADLINE and FFTD_ECANCELED (fftd_execute_async_opts).
//
// Data path: arrays inside this client's fftd_buffers go by reference (no
// payload on the socket). Other arrays of 64 KiB or more, over ipc://, are
// copied into a pool of shared buffers that libfftd keeps per client
// (one memcpy each way, much faster than NNG's socket path); smaller ones,
// and all over tcp:// or on a client of several daemons, travel inline in
// the message. FFTD_INLINE_STAGING in the environment: 0 keeps every
// payload inline, a byte count N stages arrays of N bytes or more.
FFTD_API int fftd_execute(const fftd_plan *plan, const void *in, void *out);

// fftd_callback is called once when an asynchronous execution completes,
// with the request and its status (FFTD_OK or an error). It runs on one of
// the library's I/O threads with no library lock held; it must not block
// for long and must not call fftd_request_wait on its own request.
typedef void (*fftd_callback)(fftd_request *req, int status, void *data);

// fftd_execute_async starts an execution and returns at once; up to the
// daemon's limit of executions may be in flight per client. in is copied
// before the call returns (the caller may reuse it); out must stay valid
// until completion. Exactly one of cb and reqp is used:
//   - with cb non-NULL (reqp must be NULL) cb(req, status, data) runs on
//     completion and the library frees the request after cb returns;
//   - with cb NULL, *reqp receives the request, which the caller completes
//     with fftd_request_wait (and may poll with fftd_request_done).
// If the call returns an error, the callback never runs and *reqp is not set.
FFTD_API int fftd_execute_async(const fftd_plan *plan, const void *in,
    void *out, fftd_callback cb, void *data, fftd_request **reqp);

// fftd_exec_options are per-execution settings for fftd_execute_async_opts.
// Zero-initialise and set what you need.
typedef struct fftd_exec_options {
	// deadline_us > 0: the transform must start within this many
	// microseconds of the daemon receiving the request; if it cannot (the
	// device is busy with earlier work), it is not started and the
	// request completes with FFTD_EDEADLINE. 0: no deadline.
	int64_t deadline_us;
} fftd_exec_options;

// fftd_execute_async_opts is fftd_execute_async with options (opts may be
// NULL: none).
FFTD_API int fftd_execute_async_opts_sized(const fftd_plan *plan,
    const void *in, void *out, const fftd_exec_options *opts, size_t size,
    fftd_callback cb, void *data, fftd_request **reqp);
#define fftd_execute_async_opts(plan, in, out, opts, cb, data, reqp)           \
	fftd_execute_async_opts_sized((plan), (in), (out), (opts),             \
	    sizeof(fftd_exec_options), (cb), (data), (reqp))

// fftd_request_cancel asks the daemon to drop the request if it has not
// started; the request then completes with FFTD_ECANCELED (complete it with
// fftd_request_wait as usual). Returns FFTD_OK if the daemon dropped it,
// FFTD_EBUSY if it had started or finished (it completes normally), or the
// connection's errors. Only for requests obtained through reqp, before
// fftd_request_wait.
FFTD_API int fftd_request_cancel(fftd_request *req);

// fftd_request_done returns 1 if the request has completed (wait will not
// block), else 0.
FFTD_API int fftd_request_done(fftd_request *req);

// fftd_request_wait blocks until the request completes, frees it, and
// returns its status. Only for requests obtained through reqp.
FFTD_API int fftd_request_wait(fftd_request *req);

// --- shared-memory buffers (local daemons) ----------------------------------

// fftd_buffer is a region of memory shared with the daemon: a memfd the
// daemon maps and pins for DMA (cudaHostRegister), so executions whose
// input and output lie inside buffers move no payload through the socket
// and no byte of it is copied by the daemon's CPU.
typedef struct fftd_buffer fftd_buffer;

// fftd_buffer_create makes a shared buffer of `bytes` bytes (rounded up to
// whole pages), maps it here, hands its file descriptor to the daemon once (a
// Unix socket with SCM_RIGHTS; the daemon checks with SO_PEERCRED that the
// sender is this connection's process) and stores it in *bufp. fftd_execute and
// fftd_execute_async then use the shared path by themselves whenever in and out
// each lie inside a buffer of this client. The buffer belongs to the
// connection: the daemon unmaps it when the buffer is destroyed, the client
// closes, or the process dies. Errors: FFTD_EUNSUPPORTED (the connection is not
// ipc://, or the daemon offers no shared memory, or the client talks to several
// daemons), FFTD_ELIMIT (over the daemon's per-client buffer limit),
// FFTD_ESYSERR+errno (memfd, mmap), FFTD_EBACKEND (pinning failed).
FFTD_API int fftd_buffer_create(
    fftd_client *client, size_t bytes, fftd_buffer **bufp);

// fftd_buffer_data is the buffer's address in this process (page-aligned).
FFTD_API void *fftd_buffer_data(const fftd_buffer *buf);

// fftd_buffer_size is the buffer's size in bytes (a whole number of pages).
FFTD_API size_t fftd_buffer_size(const fftd_buffer *buf);

// fftd_buffer_destroy releases the buffer in the daemon and unmaps it here.
// No execution on it may be in flight. NULL is ignored.
FFTD_API void fftd_buffer_destroy(fftd_buffer *buf);

// --- resident arrays (device memory in the daemon) --------------------------

// fftd_array is memory held in the daemon's device (GPU memory on the cuda
// backend; the daemon's host memory, 64-byte aligned, on the fftw backend)
// between requests, so that a chain of steps (executions, the matched-filter
// bank) never moves its data through the socket or PCIe. It belongs to the
// client's connection (the first daemon of a URL list): the daemon frees it at
// fftd_array_destroy, fftd_client_close, or when the client process dies.
typedef struct fftd_array fftd_array;

// fftd_array_create makes an array of `bytes` bytes (> 0) on device `device`
// (an fftd_info.devices[].index; -1: device 0), zero-filled (never another
// client's old bytes), and stores a new handle in *arrp. Errors: FFTD_EINVAL
// (bytes 0, device below -1), FFTD_ENODEVICE, FFTD_ELIMIT ([limits]
// max_arrays_per_client or max_array_bytes_per_client), FFTD_EDEVMEM (does not
// fit the device's memory budget beside plans, work areas and other arrays:
// never an out-of-memory crash), FFTD_EUNSUPPORTED (a backend without arrays).
FFTD_API int fftd_array_create(
    fftd_client *client, int device, size_t bytes, fftd_array **arrp);

// fftd_array_size is the array's size in bytes (0 for NULL).
FFTD_API size_t fftd_array_size(const fftd_array *arr);

// fftd_array_device is the index of the array's device (-1 for NULL).
FFTD_API int fftd_array_device(const fftd_array *arr);

// fftd_array_write copies len bytes from host memory src into [offset, offset +
// len) of the array; fftd_array_read copies that span into dst. Memory inside
// one of this client's fftd_buffers goes by reference (the daemon DMAs from or
// to it); other memory travels in the request (large spans through the client's
// staging buffers, in chunks). len 0 does nothing. Blocking; safe from any
// thread, but the caller orders writes, reads and executions on one span.
// Errors: FFTD_EINVAL (NULL arguments), FFTD_ESIZE (span past the array's end),
// FFTD_ECLOSED (the array's connection is gone), the connection's errors.
FFTD_API int fftd_array_write(
    fftd_array *arr, size_t offset, const void *src, size_t len);
FFTD_API int fftd_array_read(
    fftd_array *arr, size_t offset, void *dst, size_t len);

// fftd_array_destroy frees the array in the daemon and the handle. Nothing
// may be in flight on it. NULL is ignored; it may be called after
// fftd_client_close.
FFTD_API void fftd_array_destroy(fftd_array *arr);

// fftd_execute_arrays executes plan with its input in array in at byte offset
// in_offset and its output in array out at out_offset (the layouts of
// fftd_plan_desc, as fftd_execute reads and writes host arrays): the execution
// runs on the arrays' device and moves no data to or from the client. in and
// out may be one array with spans apart. A C2R execution may overwrite its
// input span (as FFTW and cuFFT do); the output layout's gaps are zeroed.
// Blocking. Errors: FFTD_EINVAL (NULL, arrays of another client, arrays on two
// devices, a plan pinned to another device, overlapping spans, an offset not a
// multiple of the element size), FFTD_ESIZE (a span past its array),
// FFTD_EUNSUPPORTED, as fftd_execute otherwise.
FFTD_API int fftd_execute_arrays(const fftd_plan *plan, fftd_array *in,
    size_t in_offset, fftd_array *out, size_t out_offset);

// FFTD_IPC_HANDLE_SIZE is sizeof(cudaIpcMemHandle_t).
#define FFTD_IPC_HANDLE_SIZE 64

// fftd_array_open_ipc makes an array of GPU memory the caller holds on the
// daemon's device `device` (as fftd_array_create's), used in place (no copy, no
// PCIe): handle (handle_len = FFTD_IPC_HANDLE_SIZE bytes, read during the call)
// is a cudaIpcMemHandle_t from cudaIpcGetMemHandle (CUDA runtime API,
// interprocess communication), which names an allocation's base; the array is
// its bytes [offset, offset + bytes) (for a pointer p, offset is p minus the
// base cuMemGetAddressRange gives). Every call that takes an fftd_array takes
// it. The memory stays the caller's: the daemon maps it (cudaIpcOpenMemHandle,
// once per allocation), never frees it, and unmaps it when the array goes
// (fftd_array_destroy, fftd_client_close, the process's death): free it after
// that. It counts in [limits] max_arrays_per_client, not in the device budget.
// Ordering: finish your writes to it (cudaStreamSynchronize) before a call uses
// the array; the daemon's writes are complete when that call returns. Blocking;
// any thread. Errors: FFTD_EINVAL (NULLs, handle_len, bytes 0, offset + bytes
// overflowing, memory of another device), FFTD_ENODEVICE, FFTD_ESIZE (past the
// allocation), FFTD_EREFUSED (not a local ipc:// connection, or a peer uid
// [limits] ipc_peers refuses: by default all but the daemon's and root's),
// FFTD_ELIMIT, FFTD_EUNSUPPORTED (fftw backend), FFTD_ECUDAERR + code (a handle
// CUDA cannot open).
FFTD_API int fftd_array_open_ipc(fftd_client *client, int device,
    const void *handle, size_t handle_len, size_t offset, size_t bytes,
    fftd_array **arrp);

// --- matched-filter bank (issue 16) -----------------------------------------

// fftd_mf_desc describes a matched-filter bank search: FINDCHIRP's filter
// (Allen et al. 2012, Phys. Rev. D 85, 122006, sec. IV; PyCBC's
// matched_filter_core). For template j of the bank and bins k in [kmin, kmax):
//   z_j(t) = 4 delta_f sum_k D_k conj(h_jk) / S_k exp(+2 pi i k t / N)
//            (the length-N complex inverse DFT of the one-sided product,
//            zero outside [kmin, kmax): PyCBC's q),
//   sigma_j^2 = 4 delta_f sum_k |h_jk|^2 / S_k,
//   rho_j(t) = |z_j(t)| / sigma_j.
// Initialise with fftd_mf_desc_init and set what you need.
// fftd_mf_sigmasq says where sigma_j^2 comes from (fftd_mf_desc).
typedef enum fftd_mf_sigmasq {
	FFTD_MF_SIGMASQ_COMPUTE = 0, // summed from h and S (the default)
	FFTD_MF_SIGMASQ_STORE   = 1, // summed, and written to desc->sigmasq
	FFTD_MF_SIGMASQ_USE     = 2  // read from desc->sigmasq, not summed
} fftd_mf_sigmasq;
typedef struct fftd_mf_desc {
	int64_t        n;         // N, time samples; spectra have N/2+1 bins
	fftd_precision precision; // FFTD_F32 or FFTD_F64 (data, psd, h)
	double         delta_f;   // Hz (= sample rate / N), > 0
	// Bins used: 0 <= kmin < kmax <= N/2+1 (kmax 0: N/2+1).
	int64_t kmin, kmax;
	// Samples of rho searched: 0 <= t_begin < t_end <= N (t_end 0: N).
	int64_t t_begin, t_end;
	double  threshold; // rho above which triggers are kept; <= 0: none
	// cluster is the trigger window in samples (>= 1): the windows are
	// [t_begin + w cluster, t_begin + (w + 1) cluster); each window whose
	// loudest rho is above threshold gives one trigger, its loudest.
	int64_t cluster;
	// sigma_j^2 of the slice's templates (PyCBC's sigmasq, its filter's
	// h_norm): STORE writes them, USE takes them instead of summing them
	// (a search of many segments against one PSD sums them once: on the
	// lent H200 the bank's first pass ran 5-10% faster without the sums),
	// as count f64 values from sigmasq_offset (bytes, a multiple of 8) of
	// an array of the data's client and device, not overlapping the
	// inputs. USE takes them as given (each finite and >= 0, else
	// FFTD_EINVAL naming it); values STORE wrote for the same templates,
	// PSD, delta_f and bins give the same results to the last bit. On an
	// error STORE's values are unspecified. NULL with COMPUTE.
	fftd_mf_sigmasq sigmasq_mode;
	fftd_array     *sigmasq;
	size_t          sigmasq_offset;
} fftd_mf_desc;

// fftd_mf_desc_init fills *desc with the defaults: n 0, FFTD_F64,
// delta_f 0, kmin 0, kmax 0 and t_begin 0, t_end 0 (the whole spectrum
// and series), threshold 0 (peaks only), cluster 1, sigma^2 computed.
FFTD_API int fftd_mf_desc_init_sized(fftd_mf_desc *desc, size_t size);
#define fftd_mf_desc_init(desc)                                                \
	fftd_mf_desc_init_sized((desc), sizeof(fftd_mf_desc))

// fftd_mf_peak is one template's result.
typedef struct fftd_mf_peak {
	double  rho;        // max rho over [t_begin, t_end)
	int64_t t;          // its sample (the first one on ties)
	double  sigma;      // sigma_j
	double  z_re, z_im; // z_j(t) at the peak (its phase, for coincidence)
} fftd_mf_peak;

// fftd_mf_trigger is one clustered trigger.
typedef struct fftd_mf_trigger {
	int64_t template_index; // in the slice searched (0 .. count - 1)
	int64_t t;              // sample
	double  rho;
	double  z_re, z_im;
} fftd_mf_trigger;

// fftd_mf_bank searches `count` templates against one data segment, all
// resident in arrays of one device: data holds D (N/2+1 complex of
// desc->precision) at data_offset; psd holds S (N/2+1 reals, the one-sided PSD
// in 1/Hz) at psd_offset; templates holds count complex spectra of N/2+1 bins
// each, contiguous, the first at templates_offset (so a bank may be searched in
// slices). F32 users scale as PyCBC does: data and templates by DYN_RANGE_FAC =
// 2^69, the PSD by its square (rho is unchanged). Offsets are bytes, multiples
// of the real size. Results, host memory the caller owns: peaks, count entries;
// triggers, room for max_triggers (may be NULL when 0), *ntriggers (not NULL)
// the number written; when more are found the loudest max_triggers are kept,
// FFTD_OK is returned and *ntotal (may be NULL) says how many were found.
// series (NULL or nseries 0: none) receives rho(t) over [t_begin, t_end) of the
// nseries templates series_index[] (indices into the slice), as [nseries][t_end
// - t_begin] values of desc->precision's real type. Both backends serve it:
// fftw on the CPU, cuda on the GPU (cuFFT's batched inverse between our
// kernels; the same peaks, windows, tie rules and trigger order). Blocking, any
// thread; over ipc:// it goes on a bank channel (a socket and a shared buffer
// the client keeps, one per concurrent caller, up to 8; FFTD_BANK_CHANNEL=0:
// NNG), polling for the reply for FFTD_BUSY_POLL_US microseconds before it
// sleeps (default: 2000 on a host of 8 or more CPUs, else 0).
// Errors: FFTD_EINVAL (naming the argument: ranges, NULLs, arrays of another
// client or on two devices, misaligned offsets, a PSD bin not positive, data or
// a template not finite, a sigma^2 given not finite or negative, a sigmasq
// span overlapping an input), FFTD_ESIZE (a span past its array),
// FFTD_EOVERFLOW, FFTD_ELIMIT (the results would exceed [limits]
// max_request_bytes: search in slices), FFTD_EUNSUPPORTED (f16; a backend
// without the bank), FFTD_EBACKEND.
FFTD_API int fftd_mf_bank_sized(fftd_client *client, const fftd_mf_desc *desc,
    size_t desc_size, fftd_array *data, size_t data_offset, fftd_array *psd,
    size_t psd_offset, fftd_array *templates, size_t templates_offset,
    int64_t count, fftd_mf_peak *peaks, size_t peak_size,
    fftd_mf_trigger *triggers, size_t trigger_size, size_t max_triggers,
    size_t *ntriggers, size_t *ntotal, const int64_t *series_index, int nseries,
    void *series);
#define fftd_mf_bank(client, desc, data, data_offset, psd, psd_offset,         \
    templates, templates_offset, count, peaks, triggers, max_triggers,         \
    ntriggers, ntotal, series_index, nseries, series)                          \
	fftd_mf_bank_sized((client), (desc), sizeof(fftd_mf_desc), (data),     \
	    (data_offset), (psd), (psd_offset), (templates),                   \
	    (templates_offset), (count), (peaks), sizeof(fftd_mf_peak),        \
	    (triggers), sizeof(fftd_mf_trigger), (max_triggers), (ntriggers),  \
	    (ntotal), (series_index), (nseries), (series))

// --- streaming (one plan, many transforms) ----------------------------------

// fftd_stream keeps up to `depth` executions of one plan in flight through
// shared-memory slots, for pipelines that transform the same shape forever
// (channelizers, detector data streams): while the daemon transforms slot
// i, the caller fills slot i+1 and reads slot i-1, so no round trip is
// waited for that could overlap.
typedef struct fftd_stream fftd_stream;

// fftd_stream_open creates a stream of `depth` slots (1..64) on plan, each slot
// holding one input and one output array of the plan, in one shared buffer.
// Needs a client of one daemon, over ipc:// (see fftd_buffer_create).
//
// Submissions and answers travel over a stream channel of the stream's own (a
// Unix SOCK_SEQPACKET socket to the daemon), not over the client's NNG socket:
// the calling thread's send wakes the daemon's channel thread directly, and the
// worker's answer wakes the thread in fftd_stream_wait directly, with no
// library or NNG threads in between; on a loaded host each thread hand-off
// saved is a wait for a CPU saved. A daemon that offers no channel (an older
// one) is used through NNG as any execution. FFTD_STREAM_CHANNEL in the
// environment: 0 always NNG, 2 require the channel (fftd_stream_open fails
// instead of falling back). Errors as fftd_buffer_create, and FFTD_ELIMIT (64
// channels per connection). A wait that times out (the client's timeout) leaves
// the stream failed: every later call answers FFTD_ETIMEDOUT, as the answer may
// yet come into a reused slot.
FFTD_API int fftd_stream_open(
    const fftd_plan *plan, int depth, fftd_stream **streamp);

// fftd_stream_input returns the input array of the next slot to submit
// (fftd_plan_input_bytes bytes), for the caller to fill in place, or NULL
// if `depth` executions are in flight (wait for one first).
FFTD_API void *fftd_stream_input(fftd_stream *stream);

// fftd_stream_submit starts the next execution. in is copied into the
// slot's input array first, unless it is NULL or that array itself (filled
// in place through fftd_stream_input). FFTD_EBUSY if depth are in flight.
FFTD_API int fftd_stream_submit(fftd_stream *stream, const void *in);

// fftd_stream_wait waits for the oldest execution in flight and returns its
// status. If out is not NULL the result is copied there (only the output
// layout's elements are written); if outp is not NULL it receives the
// slot's output array, valid until that slot is submitted again.
// FFTD_EINVAL if nothing is in flight.
FFTD_API int fftd_stream_wait(
    fftd_stream *stream, void *out, const void **outp);

// fftd_stream_pending is the number of executions in flight.
FFTD_API int fftd_stream_pending(const fftd_stream *stream);

// fftd_stream_set_deadline gives each later submission a deadline
// (fftd_exec_options.deadline_us; 0 turns it off).
FFTD_API void fftd_stream_set_deadline(
    fftd_stream *stream, int64_t deadline_us);

// fftd_stream_set_spin makes fftd_stream_wait poll the stream channel for up to
// spin_us microseconds (0, the default: sleep at once) before it sleeps. Waking
// a sleeping thread can take a scheduler tick or more (hundreds of us to ms) on
// a host whose CPUs are busy; a spinning one sees the answer at once but holds
// its CPU for the whole wait, up to spin_us: for realtime pipelines that can
// give it a core. Set spin_us near the expected execution time
// (fftd_stream_last_times says it). FFTD_EUNSUPPORTED if the stream has no
// stream channel (its waits are NNG's), FFTD_EINVAL for a NULL stream or
// spin_us over 10^6.
FFTD_API int fftd_stream_set_spin(fftd_stream *stream, uint32_t spin_us);

// fftd_stream_times says where the time of one stream execution went, in
// CLOCK_MONOTONIC nanoseconds (one clock for the client and its local
// daemon): submitted (fftd_stream_submit sent it), received (the daemon's
// channel thread read it), started and finished (its device worker began
// and ended it, host-device copies included), answered (fftd_stream_wait
// read the answer, before copying the result out). received - submitted
// and answered - finished are the hand-offs between processes; started -
// received is the wait for the device worker.
typedef struct fftd_stream_times {
	int64_t submitted_ns, received_ns, started_ns, finished_ns, answered_ns;
} fftd_stream_times;

// fftd_stream_last_times fills *times for the execution that the last
// successful fftd_stream_wait returned. FFTD_EUNSUPPORTED if the stream
// has no stream channel (over NNG the daemon's times do not travel),
// FFTD_EINVAL if no wait has succeeded yet or an argument is NULL.
FFTD_API int fftd_stream_last_times_sized(
    const fftd_stream *stream, fftd_stream_times *times, size_t size);
#define fftd_stream_last_times(stream, times)                                  \
	fftd_stream_last_times_sized(                                          \
	    (stream), (times), sizeof(fftd_stream_times))

// fftd_stream_close waits for what is in flight and frees the stream and
// its buffer. NULL is ignored.
FFTD_API void fftd_stream_close(fftd_stream *stream);

#ifdef __cplusplus
}
#endif

#endif // FFTD_H
