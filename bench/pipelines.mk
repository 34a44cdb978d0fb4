# SPDX-License-Identifier: MIT
#
# bench/pipelines.mk — bench/pipelines (issue 16, item 5): the matched-filter
# bank's templates per second through fftd's bank, fftd's plain FFT path,
# in-process cuFFT and PyCBC (bench/README.md). C objects from the generic
# rule, the one CUDA file (case c and the copy rate) from nvcc as
# bench/kernels.cu is; without CUDA the program builds without it and says
# so. Included by the top Makefile after NVCC, NVCCFLAGS, BENCH_LIB and
# CLIENT_OBJ are set; `make bench` runs it (bench/run.sh), `make
# bench-pipelines` alone.

BENCH_PIPELINES := $(BUILD)/bench/pipelines
PIPELINES_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard bench/pipelines*.c)) $(BUILD)/bench/json.o

ifeq ($(WITH_CUDA),1)
PIPELINES_OBJ += $(BUILD)/bench/pipelines_cuda.o

$(BUILD)/bench/pipelines_cuda.o: bench/pipelines_cuda.cu bench/pipelines.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@
endif

$(BENCH_PIPELINES): $(PIPELINES_OBJ) $(BENCH_LIB) $(CLIENT_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $(PIPELINES_OBJ) $(BENCH_LIB) $(CLIENT_OBJ) $(DEP_LIBS) $(CUDA_LIBS) -lstdc++ -lm

.PHONY: bench-pipelines
bench-pipelines: $(BENCH_PIPELINES) $(BUILD)/fftd
	FFTD_BIN=$(BUILD)/fftd $(BENCH_PIPELINES) --json $(BUILD)/bench/pipelines.json $(PIPELINES_ARGS)
