# SPDX-License-Identifier: MIT
#
# fftd — one entry point.
#   make            build everything (daemon, client library, fftctl, kernels, example)
#   make test       install missing packages, build, run the whole suite (also under ASan+UBSan,
#                   and a subset under TSan; GPU tests report themselves skipped where there
#                   is no GPU) and the short soak
#   make python-test  the Python package's tests, scipy.fft's suite on fftd, the PyCBC check
#   make test-gpu   run the GPU tests (on a machine with an NVIDIA GPU)
#   make bench      run the benchmarks (table on stdout, JSON under build/bench/)
#   make demo       install, build, start the daemon, run the GW150914 matched filter, stop
#   make install    install under $(DESTDIR)$(PREFIX)
#   make clean
#
# Variables: BUILD (output folder, default build), SAN=1 (ASan+UBSan build in
# build-san), SAN=thread (TSan build in build-tsan, without CUDA: see below),
# WITH_CUDA=0|1 (default: 1 when nvcc exists), STATIC_DEPS=1 (link
# mbedTLS, libuv, protobuf-c, inih statically too, for machines that lack them),
# NNG_PREFIX (where deps/nng/build.sh installs fftd's patched NNG, default
# build-deps/nng), CUDA_HOME, PREFIX, DESTDIR.
#
# NNG is always fftd's own static build of Debian's nng 1.5.2 with the fixes
# in deps/nng/patches (a listener wedged by one connect-and-close, a killed
# client's pipe never reaped); the first build makes it (~30 s).

CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
SAN       ?= 0
# TSan builds leave CUDA out: the CUDA runtime is not instrumented and maps
# memory at fixed addresses inside TSan's shadow ranges.
WITH_CUDA ?= $(if $(filter thread,$(SAN)),0,$(if $(wildcard $(NVCC)),1,0))
STATIC_DEPS ?= 0
PREFIX    ?= /usr/local
DESTDIR   ?=
SYSCONFDIR ?= /etc
UNITDIR   ?= $(PREFIX)/lib/systemd/system

ifeq ($(SAN),1)
BUILD     ?= build-san
else ifeq ($(SAN),thread)
BUILD     ?= build-tsan
else
BUILD     ?= build
endif

NNG_PREFIX ?= build-deps/nng
NNG_LIB   := $(NNG_PREFIX)/lib/libnng.a

CC        ?= cc
CXX       ?= c++
OPT       ?= -O2 -g
WARN      := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC -pthread
# Include paths per part of the tree, so that a file cannot include another
# part's private header by accident: libfftd sees the public header,
# common/ and its own; the daemon its own, common/ and the kernels' C ABI;
# fftctl its own, common/ and the public header; the example its own and the
# public header. Tests,
# benchmarks and tools (everything else) see all of it.
INC_BASE  := -Iinclude -Icommon -I$(BUILD)/gen -I$(NNG_PREFIX)/include
INC       := $(INC_BASE) -Iclient -Ifftctl -Idaemon -Ikernels -I/usr/include/hdf5/serial
$(BUILD)/client/%.o: INC := $(INC_BASE) -Iclient
$(BUILD)/common/%.o: INC := $(INC_BASE)
$(BUILD)/daemon/%.o: INC := $(INC_BASE) -Idaemon -Ikernels
$(BUILD)/fftctl-obj/%.o: INC := $(INC_BASE) -Ifftctl
$(BUILD)/examples/%.o: INC := -Iinclude -I/usr/include/hdf5/serial
$(BUILD)/kernels/%.o: INC := $(INC_BASE) -Ikernels
CXXFLAGS_ALL := -std=c++17 $(OPT) -Wall -Wextra -Werror -Iinclude -Iclient -I$(NNG_PREFIX)/include
LDFLAGS_ALL := -pthread

ifeq ($(SAN),1)
SANFLAGS  := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
CFLAGS_ALL += $(SANFLAGS)
CXXFLAGS_ALL += $(SANFLAGS)
LDFLAGS_ALL += $(SANFLAGS)
else ifeq ($(SAN),thread)
SANFLAGS  := -fsanitize=thread -fno-omit-frame-pointer
CFLAGS_ALL += $(SANFLAGS)
CXXFLAGS_ALL += $(SANFLAGS)
LDFLAGS_ALL += $(SANFLAGS)
endif

ifeq ($(STATIC_DEPS),1)
DEP_LIBS  := $(NNG_LIB) -Wl,-Bstatic -lmbedtls -lmbedx509 -lmbedcrypto -luv_a -lprotobuf-c -linih -Wl,-Bdynamic
LIBFFTD_DEP_LIBS := $(NNG_LIB) -Wl,-Bstatic -lmbedtls -lmbedx509 -lmbedcrypto -lprotobuf-c -Wl,-Bdynamic -Wl,--no-undefined
else
DEP_LIBS  := $(NNG_LIB) -lmbedtls -lmbedx509 -lmbedcrypto -luv -lprotobuf-c -linih
LIBFFTD_DEP_LIBS := $(DEP_LIBS)
endif
FFTW_LIBS := -lfftw3_threads -lfftw3f_threads -lfftw3 -lfftw3f
REF_LIBS  := -lfftw3l -lfftw3 -lfftw3f
HDF5_LIBS := -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5

# The host half of the tensor-core kernels (tc.h) builds and is unit-tested
# without CUDA too.
TC_HOST_OBJ := $(BUILD)/kernels/tc_host.o

ifeq ($(WITH_CUDA),1)
CFLAGS_ALL += -DFFTD_WITH_CUDA -I$(CUDA_HOME)/include
NVCCFLAGS := -std=c++17 -O3 -lineinfo -Xcompiler -fPIC,-Wall,-Wextra,-Werror \
	-gencode=arch=compute_90,code=sm_90 -gencode=arch=compute_90,code=compute_90 \
	-Ikernels -Werror all-warnings
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcufft -lcudart_static -ldl -lrt
# kernels/mf_callbacks.cu is cuFFT LTO callbacks: compiled to LTO-IR and
# embedded as data (below), never linked as code.
KERNEL_SRC := $(filter-out kernels/mf_callbacks.cu,$(wildcard kernels/*.cu))
KERNEL_OBJ := $(patsubst %.cu,$(BUILD)/%.o,$(KERNEL_SRC)) $(TC_HOST_OBJ) \
	$(BUILD)/kernels/mf_callbacks_lto.o
KERNEL_LIB := $(BUILD)/libfftd_kernels.a
else
CUDA_LIBS :=
KERNEL_LIB :=
endif

GEN_C     := $(BUILD)/gen/fftd.pb-c.c
GEN_H     := $(BUILD)/gen/fftd.pb-c.h
COMMON_SRC := $(wildcard common/*.c)
COMMON_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(COMMON_SRC)) $(BUILD)/gen/fftd.pb-c.o

# libfftd is client/*.c. Its errors.c and hist.c implement public calls
# the daemon and the unit tests use too (fftd_strerror, fftd_hist_bound):
# they link those objects of the library.
LIBFFTD_SRC := $(wildcard client/*.c)
LIBFFTD_PUB_OBJ := $(BUILD)/client/errors.o $(BUILD)/client/hist.o
COMMON_OBJ += $(LIBFFTD_PUB_OBJ)
CLIENT_OBJ := $(filter-out $(LIBFFTD_PUB_OBJ),$(patsubst %.c,$(BUILD)/%.o,$(LIBFFTD_SRC))) $(COMMON_OBJ)
FFTCTL_SRC := $(wildcard fftctl/*.c)
# fftctl's objects go to fftctl-obj/: $(BUILD)/fftctl is the program.
FFTCTL_OBJ := $(patsubst fftctl/%.c,$(BUILD)/fftctl-obj/%.o,$(FFTCTL_SRC))

DAEMON_SRC := $(wildcard daemon/*.c) $(filter-out $(if $(filter 1,$(WITH_CUDA)),,daemon/backends/cuda_%.c),$(wildcard daemon/backends/*.c))
DAEMON_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(DAEMON_SRC))
# Everything of the daemon but main(), for unit tests.
DAEMON_LIB_OBJ := $(filter-out $(BUILD)/daemon/main.o,$(DAEMON_OBJ))

# examples/gw150914: the single-template example (gw150914) and the
# template-bank search (gw150914-search: search*.c, which also links the
# example's data.c and plot.c for their file and gnuplot helpers).
SEARCH_SRC := $(wildcard examples/gw150914/search*.c)
EXAMPLE_SRC := $(filter-out $(SEARCH_SRC),$(wildcard examples/gw150914/*.c))
EXAMPLE_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(EXAMPLE_SRC))
SEARCH_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(SEARCH_SRC)) $(BUILD)/examples/gw150914/data.o $(BUILD)/examples/gw150914/plot.o

UNIT_SRC  := $(wildcard tests/unit/test_*.c)
INTEG_SRC := $(wildcard tests/integration/test_*.c)
GPU_SRC   := $(wildcard tests/gpu/test_*.c)
# tests/util/fixture.c, probe.c, shm_raw.c, i8_check.c and mf_sigmasq.c are
# clients of libfftd: integration and GPU tests link them, unit tests (which
# do not link libfftd) do not.
# tests/util/gpu.c calls the CUDA runtime: GPU tests only.
CLIENT_UTIL_SRC := tests/util/fixture.c tests/util/probe.c tests/util/shm_raw.c \
	tests/util/i8_check.c tests/util/mf_sigmasq.c
TEST_UTIL_SRC := $(filter-out $(CLIENT_UTIL_SRC) tests/util/gpu.c tests/util/tc_ref.c,$(wildcard tests/util/*.c))
TEST_UTIL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TEST_UTIL_SRC))
CLIENT_UTIL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(CLIENT_UTIL_SRC))
# bench/lib: the benchmark engine (daemon spawning, the raw-protocol client,
# the load engine), one archive that bench/* and the tests link; a program
# takes only the members it uses (the load engine calls libfftd).
BENCH_LIB := $(BUILD)/bench/lib/libbench.a
# The load engine gives its clients CPU time slices as the daemon does
# (daemon/cpu_slice.c).
BENCH_LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/lib/*.c)) $(BUILD)/daemon/cpu_slice.o
GPU_UTIL_OBJ := $(BUILD)/tests/util/gpu.o $(BUILD)/tests/util/tc_ref.o
UNIT_BIN  := $(patsubst tests/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
INTEG_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(INTEG_SRC))
GPU_BIN   := $(patsubst tests/%.c,$(BUILD)/tests/%,$(GPU_SRC))
CXX_TEST_BIN := $(BUILD)/tests/cxx_header

# The FFTW3 drop-in library (dropin/, issue 17): dropin/api.c compiled once
# per precision (fftw_ and fftwf_), the other files once; linked with
# libfftd's objects into libfftd-fftw3.so, which exports FFTW's names only
# (dropin/fftw3.map). tests/dropin: a program built against the real FFTW
# (fftw_prog, -lfftw3 -lfftw3f, never libfftd) and the cmocka test that runs
# it with and without the drop-in (test_dropin).
DROPIN_SRC := $(filter-out dropin/api.c,$(wildcard dropin/*.c))
DROPIN_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(DROPIN_SRC)) $(BUILD)/dropin/api_f64.o $(BUILD)/dropin/api_f32.o
DROPIN_LIB := $(BUILD)/libfftd-fftw3.so
DROPIN_TEST_BIN := $(BUILD)/tests/dropin/fftw_prog $(BUILD)/tests/dropin/test_dropin

# With STATIC_DEPS libuv's archive is not PIC: no drop-in library. libfftd.so
# needs only NNG, mbedTLS and protobuf-c, whose Debian archives are PIC, so it
# is built with those linked in (self-contained, for the Python package on
# the GPU machine: tools/gpu-python.sh).
BINS := $(BUILD)/fftd $(BUILD)/fftctl $(BUILD)/libfftd.a $(BUILD)/libfftd.so \
	$(if $(filter 1,$(STATIC_DEPS)),,$(DROPIN_LIB) $(DROPIN_TEST_BIN)) \
	$(if $(EXAMPLE_SRC),$(BUILD)/gw150914) $(if $(SEARCH_SRC),$(BUILD)/gw150914-search)

include bench/kernels.mk
include bench/pipelines.mk

.PHONY: all deps test check python-test pycbc-driver test-unit test-san test-gpu bench bench-e2e bench-python demo install install-files clean format gpu-bundle gpu-run-copy fuzz fuzz-smoke
.DEFAULT_GOAL := all

all: $(BINS) $(UNIT_BIN) $(INTEG_BIN) $(GPU_BIN) $(CXX_TEST_BIN) $(BUILD)/bench/e2e $(BUILD)/bench/load $(BUILD)/bench/auto $(BUILD)/bench/soak $(BUILD)/bench/membw $(BUILD)/bench/python_c \
	$(if $(filter 1 thread,$(SAN)),,$(BENCH_KERNELS) $(BENCH_CUFFT_LTO) $(BENCH_PIPELINES))

# Whatever links fftd's NNG relinks when it changes (a new patch in
# deps/nng/patches): their own rules name only objects and libfftd.
$(filter-out %.py %.sh,$(BINS) $(UNIT_BIN) $(INTEG_BIN) $(GPU_BIN) $(CXX_TEST_BIN)) $(BUILD)/libfftd.so \
	$(BUILD)/bench/e2e $(BUILD)/bench/load $(BUILD)/bench/auto $(BUILD)/bench/soak $(BUILD)/bench/python_c: $(NNG_LIB)

# --- fftd's NNG (deps/nng) ----------------------------------------------------
$(NNG_LIB): deps/nng/build.sh deps/nng/patches/series $(wildcard deps/nng/patches/*.patch)
	sh deps/nng/build.sh $(NNG_PREFIX)

# --- generated protocol code -------------------------------------------------
$(GEN_C) $(GEN_H) &: proto/fftd.proto
	@mkdir -p $(BUILD)/gen
	protoc-c --proto_path=proto --c_out=$(BUILD)/gen proto/fftd.proto

$(BUILD)/gen/fftd.pb-c.o: $(GEN_C)
	$(CC) $(filter-out -Wshadow -Wstrict-prototypes,$(CFLAGS_ALL)) $(INC_BASE) -Wno-unused-parameter -c $< -o $@

# --- objects -------------------------------------------------------------------
# Header dependencies come from the compiler (-MMD -MP: one .d file beside
# each object, read back below); the generated protocol header and NNG's
# must exist before the first compile, hence order-only.
$(BUILD)/%.o: %.c | $(GEN_H) $(NNG_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INC) -MMD -MP -c $< -o $@

$(BUILD)/fftctl-obj/%.o: fftctl/%.c | $(GEN_H) $(NNG_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INC) -MMD -MP -c $< -o $@

$(BUILD)/kernels/%.o: kernels/%.cu $(wildcard kernels/*.h kernels/*.cuh)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

# The matched-filter bank's cuFFT LTO callbacks (bench/cufft_lto.c
# measures them): LTO-IR for sm_90 (cuFFT links it into its kernels at
# plan time, cufftXtSetJITCallback), turned into a C array by bin2c.
$(BUILD)/kernels/mf_callbacks.fatbin: kernels/mf_callbacks.cu kernels/mf_lto.h
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -Ikernels -gencode=arch=compute_90,code=lto_90 -dc -fatbin $< -o $@
$(BUILD)/kernels/mf_callbacks_lto.c: $(BUILD)/kernels/mf_callbacks.fatbin
	{ echo '#include "mf_lto.h"'; \
	  $(CUDA_HOME)/bin/bin2c --name fftd__mf_cb_lto --type longlong --const $<; \
	  echo 'const size_t fftd__mf_cb_lto_size = sizeof(fftd__mf_cb_lto);'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/kernels/mf_callbacks_lto.o: $(BUILD)/kernels/mf_callbacks_lto.c
	$(CC) $(CFLAGS_ALL) -Ikernels -c $< -o $@

$(KERNEL_LIB): $(KERNEL_OBJ)
	ar rcs $@ $^

# --- libraries and programs ------------------------------------------------------
$(BUILD)/libfftd.a: $(CLIENT_OBJ)
	ar rcs $@ $^

$(BENCH_LIB): $(BENCH_LIB_OBJ)
	ar rcs $@ $^

# The library exports only what include/fftd.h marks FFTD_API: its objects
# build with hidden visibility, and the version script keeps the rest local
# (tests/symbols.sh checks it).
$(CLIENT_OBJ): CFLAGS_ALL += -fvisibility=hidden

# Both libraries are never unloaded (-z nodelete): NNG's threads, which
# they start and which run until the process exits, would otherwise run
# unmapped code after a dlclose (Python's cffi closes libfftd when the
# interpreter finalises: the test process died of SIGSEGV at exit,
# intermittently; tests/symbols.sh checks the flag).
$(BUILD)/libfftd.so: $(CLIENT_OBJ) $(NNG_LIB) client/libfftd.map
	$(CC) -shared -Wl,-soname,libfftd.so.0 -Wl,--version-script=client/libfftd.map -Wl,-z,nodelete $(LDFLAGS_ALL) -o $@ $(CLIENT_OBJ) $(LIBFFTD_DEP_LIBS) -lm

$(BUILD)/dropin/%.o: INC := $(INC_BASE) -Idropin
$(DROPIN_OBJ): CFLAGS_ALL += -fvisibility=hidden

$(BUILD)/dropin/api_f64.o: dropin/api.c | $(GEN_H) $(NNG_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INC) -MMD -MP -c $< -o $@

$(BUILD)/dropin/api_f32.o: dropin/api.c | $(GEN_H) $(NNG_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(INC) -DFFTD_DR_SINGLE -MMD -MP -c $< -o $@

$(DROPIN_LIB): $(DROPIN_OBJ) $(CLIENT_OBJ) $(NNG_LIB) dropin/fftw3.map
	$(CC) -shared -Wl,-soname,libfftd-fftw3.so -Wl,--version-script=dropin/fftw3.map -Wl,-z,defs -Wl,-z,nodelete $(LDFLAGS_ALL) -o $@ $(DROPIN_OBJ) $(CLIENT_OBJ) $(DEP_LIBS) -ldl -lm

$(BUILD)/fftd: $(DAEMON_OBJ) $(COMMON_OBJ) $(KERNEL_LIB) $(NNG_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $(DAEMON_OBJ) $(COMMON_OBJ) $(KERNEL_LIB) $(DEP_LIBS) $(FFTW_LIBS) $(CUDA_LIBS) -lsystemd -lstdc++ -lm

$(BUILD)/fftctl: $(FFTCTL_OBJ) $(BUILD)/libfftd.a $(NNG_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $(FFTCTL_OBJ) $(BUILD)/libfftd.a $(DEP_LIBS) -lm

$(BUILD)/gw150914: $(EXAMPLE_OBJ) $(BUILD)/libfftd.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(EXAMPLE_OBJ) $(BUILD)/libfftd.a $(DEP_LIBS) $(HDF5_LIBS) -lfftw3 -lm

$(BUILD)/gw150914-search: $(SEARCH_OBJ) $(BUILD)/libfftd.a
	$(CC) $(LDFLAGS_ALL) -o $@ $(SEARCH_OBJ) $(BUILD)/libfftd.a $(DEP_LIBS) $(HDF5_LIBS) -lm

# --- tests -------------------------------------------------------------------------
# Unit tests link the daemon's internals; integration and GPU tests are real
# clients of a real daemon (they link libfftd only, plus FFTW references).
# test_npy and test_tc_fftctl test fftctl's .npy reader and writer: they
# link its object (TEST_EXTRA_OBJ).
NPY_OBJ := $(BUILD)/fftctl-obj/npy.o
$(BUILD)/tests/unit/test_npy $(BUILD)/tests/gpu/test_tc_fftctl: $(NPY_OBJ)
$(BUILD)/tests/unit/test_npy $(BUILD)/tests/gpu/test_tc_fftctl: TEST_EXTRA_OBJ := $(NPY_OBJ)

# Unit tests link the daemon's internals from one archive, so each takes
# only the objects it calls into (and what those call), not the daemon.
DAEMON_LIB := $(BUILD)/libfftd_daemon.a
$(DAEMON_LIB): $(DAEMON_LIB_OBJ) $(COMMON_OBJ) $(TC_HOST_OBJ)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/unit/%: $(BUILD)/tests/unit/%.o $(DAEMON_LIB) $(TEST_UTIL_OBJ) $(BENCH_LIB) $(KERNEL_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(TEST_EXTRA_OBJ) $(TEST_UTIL_OBJ) $(BENCH_LIB) $(DAEMON_LIB) $(KERNEL_LIB) $(DEP_LIBS) $(FFTW_LIBS) $(REF_LIBS) $(CUDA_LIBS) -lsystemd -lcmocka -lstdc++ -lm

$(BUILD)/tests/integration/%: $(BUILD)/tests/integration/%.o $(TEST_UTIL_OBJ) $(CLIENT_UTIL_OBJ) $(BENCH_LIB) $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(TEST_UTIL_OBJ) $(CLIENT_UTIL_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(DEP_LIBS) $(REF_LIBS) -lcmocka -lm

$(BUILD)/tests/gpu/%: $(BUILD)/tests/gpu/%.o $(TEST_UTIL_OBJ) $(GPU_UTIL_OBJ) $(CLIENT_UTIL_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(KERNEL_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(TEST_EXTRA_OBJ) $(TEST_UTIL_OBJ) $(GPU_UTIL_OBJ) $(CLIENT_UTIL_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(KERNEL_LIB) $(DEP_LIBS) $(REF_LIBS) $(CUDA_LIBS) -lcmocka -lstdc++ -lm

# tests/pycbc/mf_driver: the fftw backend's matched-filter bank on the
# GW150914 search input, for tests/pycbc/check_mf.py to compare with PyCBC
# (tests/pycbc/run.sh builds it and runs the check; it needs a Python venv
# with examples/gw150914/requirements.txt). Not part of `all`.
PYCBC_DRIVER := $(BUILD)/tests/pycbc/mf_driver
pycbc-driver: $(PYCBC_DRIVER)
$(PYCBC_DRIVER): $(BUILD)/tests/pycbc/mf_driver.o $(DAEMON_LIB) $(KERNEL_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(DAEMON_LIB) $(KERNEL_LIB) $(DEP_LIBS) $(FFTW_LIBS) $(CUDA_LIBS) $(HDF5_LIBS) -lsystemd -lstdc++ -lm

# tests/dropin/fftw_prog is an FFTW program like any other: the real
# fftw3.h, -lfftw3 -lfftw3f (and -lfftw3l for its long double references).
$(BUILD)/tests/dropin/fftw_prog: $(BUILD)/tests/dropin/fftw_prog.o
	$(CC) $(LDFLAGS_ALL) -o $@ $< -lfftw3 -lfftw3f -lfftw3l -lm

$(BUILD)/tests/dropin/test_dropin: $(BUILD)/tests/dropin/test_dropin.o $(TEST_UTIL_OBJ) $(CLIENT_UTIL_OBJ) $(BENCH_LIB) $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $< $(TEST_UTIL_OBJ) $(CLIENT_UTIL_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(DEP_LIBS) $(REF_LIBS) -lcmocka -lm

$(CXX_TEST_BIN): tests/cxx_header.cc include/fftd.h $(BUILD)/libfftd.a
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(BUILD)/libfftd.a $(DEP_LIBS)

# --- benchmarks ----------------------------------------------------------------------
E2E_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/e2e*.c)) $(BUILD)/bench/json.o

$(BUILD)/bench/e2e: $(E2E_OBJ) $(BENCH_LIB) $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $(E2E_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(DEP_LIBS) $(CUDA_LIBS) -lm

# bench/load: the many-tenant load (issue 5); the engine is bench/lib/load*.c,
# shared with tests/integration/test_load.c.
BENCH_LOAD_OBJ := $(BUILD)/bench/load.o $(BUILD)/bench/json.o

$(BUILD)/bench/load: $(BENCH_LOAD_OBJ) $(BENCH_LIB) $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $(BENCH_LOAD_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(DEP_LIBS) -lfftw3 -lm

# bench/auto: accuracy-aware auto against the default algorithm at the
# data's precision (issue 18), through a daemon, on resident arrays.
BENCH_AUTO_OBJ := $(BUILD)/bench/auto.o $(BUILD)/bench/json.o $(TC_HOST_OBJ)

$(BUILD)/bench/auto: $(BENCH_AUTO_OBJ) $(BENCH_LIB) $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $(BENCH_AUTO_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(DEP_LIBS) -lm

# bench/soak: the soak test (issue 14; bench/README.md), on the load engine's
# request generator.
BENCH_SOAK_OBJ := $(BUILD)/bench/soak.o $(BUILD)/bench/soak_client.o $(BUILD)/bench/soak_probe.o $(BUILD)/bench/json.o

$(BUILD)/bench/soak: $(BENCH_SOAK_OBJ) $(BENCH_LIB) $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $(BENCH_SOAK_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(DEP_LIBS) -lfftw3 -lm

# bench/membw: the host's memory copy bandwidth, to read load's figures by.
$(BUILD)/bench/membw: $(BUILD)/bench/membw.o $(BUILD)/bench/json.o
	$(CC) $(LDFLAGS_ALL) -o $@ $^ -lm

# bench/python_c: the C client baseline of bench/python.py (not run alone).
$(BUILD)/bench/python_c: $(BUILD)/bench/python_c.o $(BUILD)/bench/json.o $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $(BUILD)/bench/python_c.o $(BUILD)/bench/json.o $(CLIENT_OBJ) $(DEP_LIBS) -lm

# bench-python: the Python package against the C client and numpy/scipy/CuPy
# (bench/python.py, in $(PYTHON): default the venv python/run_tests.sh makes).
PYTHON ?= $(BUILD)/venv-gw/bin/python
bench-python: $(BUILD)/bench/python_c $(BUILD)/fftd $(BUILD)/libfftd.so
	PYTHONPATH=python FFTD_LIB=$(BUILD)/libfftd.so $(PYTHON) bench/python.py \
		--spawn $(BUILD)/fftd --c-helper $(BUILD)/bench/python_c \
		--json $(BUILD)/bench/python.json $(PYBENCH_ARGS)

# bench-e2e: spawns its own daemon on a temporary socket (bench/README.md).
bench-e2e: $(BUILD)/bench/e2e $(BUILD)/fftd
	$(BUILD)/bench/e2e --spawn $(BUILD)/fftd --json $(BUILD)/bench/e2e.json \
		$$(nvidia-smi -L >/dev/null 2>&1 || echo --quick) $(E2E_ARGS)

# --- fuzzers (tests/fuzz/README.md) -----------------------------------------------
# make fuzz builds the libFuzzer targets tests/fuzz/fuzz-NAME.c into
# build-fuzz/ with clang (ASan+UBSan), and writes their seed corpora
# (build-fuzz/corpus/NAME/) from real messages (tests/fuzz/seeds.c).
# make fuzz-smoke runs each for FUZZ_SECONDS (tests/fuzz/run.sh).
FUZZ_CC      ?= clang
FUZZ_BUILD   := build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_CFLAGS  := -std=c11 -D_GNU_SOURCE -O2 -g -fno-omit-frame-pointer $(WARN) -pthread \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
	-Iinclude -Iclient -Ifftctl -Icommon -Idaemon -I$(FUZZ_BUILD)/gen -I$(NNG_PREFIX)/include
FUZZ_LDFLAGS := -pthread -fsanitize=address,undefined
FUZZ_LIBS    := $(NNG_LIB) -lmbedtls -lmbedx509 -lmbedcrypto -lprotobuf-c -linih -lsystemd -lm
# What the targets exercise, compiled with the fuzz flags.
FUZZ_LIB_SRC := client/errors.c common/errmsg.c common/layout.c common/mf_wire.c common/wire.c client/hist.c \
	daemon/chan.c daemon/fdsock.c daemon/config.c daemon/log.c daemon/remote.c fftctl/npy.c
FUZZ_LIB_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(FUZZ_LIB_SRC)) $(FUZZ_BUILD)/gen/fftd.pb-c.o
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_BINS    := $(patsubst %,$(FUZZ_BUILD)/fuzz-%,$(FUZZ_NAMES))

fuzz: $(FUZZ_BINS) $(FUZZ_BUILD)/corpus/.stamp

fuzz-smoke: fuzz
	sh tests/fuzz/run.sh $(FUZZ_SECONDS)

$(FUZZ_BUILD)/gen/fftd.pb-c.c $(FUZZ_BUILD)/gen/fftd.pb-c.h &: proto/fftd.proto
	@mkdir -p $(FUZZ_BUILD)/gen
	protoc-c --proto_path=proto --c_out=$(FUZZ_BUILD)/gen proto/fftd.proto

$(FUZZ_BUILD)/gen/fftd.pb-c.o: $(FUZZ_BUILD)/gen/fftd.pb-c.c
	$(FUZZ_CC) $(filter-out -Wshadow -Wstrict-prototypes,$(FUZZ_CFLAGS)) -Wno-unused-parameter -c $< -o $@

$(FUZZ_BUILD)/%.o: %.c | $(FUZZ_BUILD)/gen/fftd.pb-c.h $(NNG_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/tests/fuzz/fuzz-%.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

$(FUZZ_BUILD)/fuzz-seeds: $(FUZZ_BUILD)/tests/fuzz/seeds.o $(FUZZ_LIB_OBJ)
	$(FUZZ_CC) $(FUZZ_LDFLAGS) -fsanitize=fuzzer-no-link -o $@ $^ $(FUZZ_LIBS)

# The corpora are made anew whenever the seed writer changes; inputs the
# fuzzers added meanwhile stay.
$(FUZZ_BUILD)/corpus/.stamp: $(FUZZ_BUILD)/fuzz-seeds deploy/fftd.conf
	$(FUZZ_BUILD)/fuzz-seeds $(FUZZ_BUILD)/corpus deploy/fftd.conf
	touch $@

deps:
	@sh tools/install-deps.sh

# The compiler's header dependencies (see the object rule).
-include $(shell find $(BUILD) $(FUZZ_BUILD) -name '*.d' 2>/dev/null)

# TSan in CI: the unit tests and the integration tests that fit its ~8
# minutes on 2 cores and hold no timing assertions TSan's 5-15x slowdown
# breaks (test_devices, test_multi, test_scheduler time their work; the
# soak runs in the plain build: tests/run.sh says why not the ASan one).
space := $(empty) $(empty)
comma := ,
TSAN_TESTS := $(notdir $(UNIT_BIN)) test_load test_metrics test_remote \
	test_robustness_clients test_robustness_daemon test_shm_bits \
	test_shm_lifetime test_shm_raw test_shm_streams test_systemd \
	test_transforms test_mf test_bankchan test_dropin cxx_header

# make check builds and runs the suite with what is installed (and the
# matched-filter bank against PyCBC on GW150914: tests/pycbc, which makes
# its Python venv on first use; and LALSuite's FFT plans through the FFTW
# drop-in: tests/dropin/run_lal.sh, in the same venv); make test
# installs what it needs first (tools/install-deps.sh), then checks.
test: deps
	$(MAKE) check

check:
	$(MAKE) all
	$(MAKE) SAN=1 all
	$(MAKE) SAN=thread all
	$(MAKE) fuzz-smoke FUZZ_SECONDS=20
	sh tests/run.sh --all build build-san build-tsan=$(subst $(space),$(comma),$(strip $(TSAN_TESTS)))
	sh tests/pycbc/run.sh build
	sh tests/dropin/run_lal.sh build
	sh python/run_tests.sh build

# python-test: the Python package's tests, scipy.fft's suite with the fftd backend and
# the PyCBC check (python/run_tests.sh; the venv of tests/pycbc/run.sh)
python-test:
	sh python/run_tests.sh $(BUILD)

test-unit: all
	sh tests/run.sh $(BUILD)

test-gpu: all
	FFTD_TEST_GPU=1 sh tests/run.sh --gpu $(BUILD)

bench: all
	sh bench/run.sh $(BUILD)

demo: deps
	$(MAKE) all
	sh examples/gw150914/demo.sh $(BUILD)

install: all install-files
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(BUILD)/fftd $(DESTDIR)$(PREFIX)/bin/fftd
	install -m 0755 $(BUILD)/fftctl $(DESTDIR)$(PREFIX)/bin/fftctl
	install -m 0644 $(BUILD)/libfftd.a $(DESTDIR)$(PREFIX)/lib/libfftd.a
	$(if $(filter 1,$(STATIC_DEPS)),,install -m 0755 $(BUILD)/libfftd.so $(DESTDIR)$(PREFIX)/lib/libfftd.so.0)
	$(if $(filter 1,$(STATIC_DEPS)),,ln -sf libfftd.so.0 $(DESTDIR)$(PREFIX)/lib/libfftd.so)
	install -m 0644 include/fftd.h $(DESTDIR)$(PREFIX)/include/fftd.h

# install-files: the service files alone (unit with this PREFIX and
# SYSCONFDIR, sysusers.d, tmpfiles.d, the default config unless one is
# there, the README); tests/integration/test_systemd.c checks them.
install-files:
	install -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(PREFIX)/lib/sysusers.d $(DESTDIR)$(PREFIX)/lib/tmpfiles.d $(DESTDIR)$(SYSCONFDIR)/fftd $(DESTDIR)$(PREFIX)/share/doc/fftd
	sed 's|/usr/local|$(PREFIX)|g; s|/etc/fftd|$(SYSCONFDIR)/fftd|g' deploy/fftd.service > $(DESTDIR)$(UNITDIR)/fftd.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/fftd.service
	install -m 0644 deploy/fftd.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/fftd.conf
	install -m 0644 deploy/fftd.tmpfiles $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/fftd.conf
	test -e $(DESTDIR)$(SYSCONFDIR)/fftd/fftd.conf || install -m 0644 deploy/fftd.conf $(DESTDIR)$(SYSCONFDIR)/fftd/fftd.conf
	install -m 0644 README.md $(DESTDIR)$(PREFIX)/share/doc/fftd/README.md

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cu' '*.cuh' '*.cc')

# gpu-bundle builds into build-gpu with NNG, libuv, protobuf-c and inih linked
# statically and cmocka beside the binaries, for the lent GPU machine, which
# has CUDA, FFTW and HDF5 but none of those (see ../shared/DEVICE.md).
# gpu-run/ holds only what runs there (the device tool carries at most
# 64 MiB): daemon, fftctl, example, GPU tests, benchmarks, debug info
# stripped; scripts run with B=gpu-run.
GPU_RUN_FILES := fftd fftctl gw150914 gw150914-search bench/auto bench/e2e bench/kernels bench/cufft_lto bench/load bench/membw bench/pipelines bench/soak bench/python_c libfftd.so lib/libcmocka.so.0 \
	$(patsubst build-gpu/%,%,$(filter-out %.o %.d,$(wildcard build-gpu/tests/gpu/test_*)))
gpu-bundle:
	$(MAKE) BUILD=build-gpu STATIC_DEPS=1 all
	mkdir -p build-gpu/lib
	cp -L /usr/lib/x86_64-linux-gnu/libcmocka.so.0 build-gpu/lib/
	rm -rf gpu-run
	$(MAKE) gpu-run-copy
	du -sh gpu-run

gpu-run-copy:
	cd build-gpu && for f in $(GPU_RUN_FILES); do \
		mkdir -p ../gpu-run/$$(dirname $$f) && cp $$f ../gpu-run/$$f && \
		strip --strip-debug ../gpu-run/$$f 2>/dev/null; done; true

clean:
	rm -rf build build-san build-tsan build-gpu build-deps build-fuzz
