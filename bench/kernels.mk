# SPDX-License-Identifier: MIT
#
# bench/kernels.mk — bench/kernels (issue 4): tc16 vs cuFFT f16 and split16 vs
# cuFFT f32 on the same GPU. Included by the top Makefile after KERNEL_LIB,
# NVCC and NVCCFLAGS are set (WITH_CUDA=1 only); `make bench-kernels` builds
# and runs it, table on stdout, JSON in $(BUILD)/bench/kernels.json.

ifeq ($(WITH_CUDA),1)
BENCH_KERNELS := $(BUILD)/bench/kernels

$(BENCH_KERNELS): bench/kernels.cu kernels/tc.h $(KERNEL_LIB)
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -o $@ bench/kernels.cu $(KERNEL_LIB) -lcufft -lfftw3 -lm \
		-Xlinker -rpath=$(CUDA_HOME)/lib64

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
