# SPDX-License-Identifier: MIT
#
# bench/kernels.mk — bench/kernels (issues 4 and 18): tc16 and split16 beside
# cuFFT and VkFFT on the same GPU. Included by the top Makefile after
# KERNEL_LIB, NVCC and NVCCFLAGS are set (WITH_CUDA=1 only); `make
# bench-kernels` builds and runs it, table on stdout, JSON in
# $(BUILD)/bench/kernels.json.
#
# VkFFT: `make bench-kernels VKFFT_DIR=/path/to/VkFFT` (a VkFFT source tree,
# fetched outside this repository: bench/README.md) builds its CUDA backend
# into the bench (NVRTC and the driver API: -lnvrtc -lcuda); without
# VKFFT_DIR the bench has no VkFFT columns and says so. The directory given
# is remembered in $(BUILD)/bench/kernels_vkfft.dir, so changing it rebuilds.

ifeq ($(WITH_CUDA),1)
BENCH_KERNELS := $(BUILD)/bench/kernels
BENCH_KERNELS_SRC := bench/kernels.cu bench/kernels_run.cu bench/kernels_report.cu \
	bench/kernels_conv.cu
BENCH_KERNELS_OBJ := $(patsubst %.cu,$(BUILD)/%.o,$(BENCH_KERNELS_SRC)) \
	$(BUILD)/bench/kernels_vkfft.o $(BUILD)/bench/json.o
BENCH_VK_DIRFILE := $(BUILD)/bench/kernels_vkfft.dir

VKFFT_DIR ?=
ifneq ($(VKFFT_DIR),)
ifeq ($(wildcard $(VKFFT_DIR)/vkFFT/vkFFT.h),)
$(error VKFFT_DIR=$(VKFFT_DIR) has no vkFFT/vkFFT.h: give the root of a VkFFT source tree)
endif
# -isystem: VkFFT's headers are not held to our warning flags.
BENCH_VK_FLAGS := -DFFTD_BENCH_VKFFT -DVKFFT_BACKEND=1 -isystem $(VKFFT_DIR)/vkFFT \
	-DFFTD_BENCH_CUDA_HOME='"$(CUDA_HOME)"'
BENCH_VK_LIBS := -L$(CUDA_HOME)/lib64 -L$(CUDA_HOME)/lib64/stubs -lnvrtc -lcuda
endif

# Rewritten only when VKFFT_DIR changes (the rule always runs, the file's
# time moves only then).
$(BENCH_VK_DIRFILE): bench-kernels-vkfft-dir
	@:
.PHONY: bench-kernels-vkfft-dir
bench-kernels-vkfft-dir:
	@mkdir -p $(dir $(BENCH_VK_DIRFILE))
	@echo '$(VKFFT_DIR)' | cmp -s - $(BENCH_VK_DIRFILE) 2>/dev/null || \
		echo '$(VKFFT_DIR)' > $(BENCH_VK_DIRFILE)

$(patsubst %.cu,$(BUILD)/%.o,$(BENCH_KERNELS_SRC)): $(BUILD)/%.o: %.cu bench/kernels.h bench/kernels_vkfft.h bench/json.h kernels/tc.h kernels/convert.h
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -c $< -o $@

$(BUILD)/bench/kernels_vkfft.o: bench/kernels_vkfft.cu bench/kernels_vkfft.h $(BENCH_VK_DIRFILE)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) $(BENCH_VK_FLAGS) -c $< -o $@

$(BENCH_KERNELS): $(BENCH_KERNELS_OBJ) $(KERNEL_LIB) $(BENCH_VK_DIRFILE)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ $(BENCH_KERNELS_OBJ) $(KERNEL_LIB) -lcufft -lfftw3 -lm \
		$(BENCH_VK_LIBS) -Xlinker -rpath=$(CUDA_HOME)/lib64

# bench/cufft_lto: cuFFT with and without the bank's LTO callbacks.
BENCH_CUFFT_LTO := $(BUILD)/bench/cufft_lto
$(BENCH_CUFFT_LTO): bench/cufft_lto.c kernels/mf_lto.h $(KERNEL_LIB)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Ikernels -o $@ bench/cufft_lto.c $(KERNEL_LIB) $(CUDA_LIBS) -lpthread -lm

.PHONY: bench-kernels
bench-kernels: $(BENCH_KERNELS) $(BENCH_CUFFT_LTO)
	$(BENCH_KERNELS) --json $(BUILD)/bench/kernels.json
	$(BENCH_CUFFT_LTO) --json $(BUILD)/bench/cufft_lto.json
endif
