// SPDX-License-Identifier: MIT
//
// kernels.cu — bench/kernels: fftd's tensor-core FFT kernels (kernels/tc.h)
// beside their peers on the same GPU in one run (issues 4 and 18): tc16
// against cuFFT f16 and VkFFT f16 (fp16 storage, fp32 arithmetic), split16
// against cuFFT f32 and VkFFT f32; forward C2C 1D N = 2^8 .. 2^27, 2D 256^2
// .. 4096^2, 3D 32^3 .. 512^3 and two boxes, R2C 1D/2D/3D; 2^26 points per
// launch (complex points for C2C, real inputs for R2C; one 2^27-point
// transform for 1D 2^27 and 3D 512^3). Each row gives the fewest passes the
// size needs and its memory floor at the device copy rate measured here
// (kernels_report.cu), the times (median of RUNS launches between CUDA
// events, after warm-up), the ratio to the best peer and the relative L2
// errors against FFTW in double precision on the same inputs (uniform in
// [-1, 1], rounded to the storage precision; kernels_run.cu). VkFFT comes in
// when built with VKFFT_DIR (kernels_vkfft.cu); without it the table has no
// VkFFT columns and says so.
//
// usage: kernels [--quick] [--noerr] [--ours] [--list] [--conv]
//                [--only NAMES] [--json FILE]
// Prints a table; writes every figure as JSON when a path is given. --only
// runs the cases named (e.g. "1D 4096" or "1D 32768,3D 64^3,R2C 2D 1024^2"),
// --noerr skips the FFTW checks (both for profiling under ncu), --quick
// takes 20 runs instead of 60 and checks fewer transforms, --ours times tc16
// and split16 alone (no peers, no conversion table, no 32-byte-run rows: the
// A/B of two builds of the kernels), --conv runs the conversion table alone,
// --list prints the cases, their batch, passes and bytes per pass without
// running anything.

#include "kernels.h"
#include "kernels_vkfft.h"

#include <cstring>
#include <getopt.h>

static uint64_t rng = 0x243f6a8885a308d3ull;

// urand: xorshift64, uniform in [-1, 1).
static double
urand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double) (rng >> 11) * 0x1p-52 - 1.0;
}

// --only: a comma-separated list of case names.
static bool
selected(const char *only, const std::string &name)
{
	if (only == NULL)
		return true;
	std::string list = std::string(",") + only + ",";
	return list.find("," + name + ",") != std::string::npos;
}

// add_case appends a case of `points` per launch (batch = points / size, at
// least 1).
static void
add_case(std::vector<Case> &v, bool r2c, int rank, int64_t d0, int64_t d1,
    int64_t d2, const std::string &name)
{
	Case c;
	c.rank    = rank;
	c.dims[0] = d0;
	c.dims[1] = d1;
	c.dims[2] = d2;
	c.r2c     = r2c;
	c.name    = (r2c ? "R2C " : "") + name;
	c.batch   = std::max<int64_t>(1, kPoints / c.per_in());
	v.push_back(c);
}

// all_cases: the rows of the table, in order.
static std::vector<Case>
all_cases(void)
{
	std::vector<Case> v;
	for (int l = 8; l <= 27; l++) {
		int64_t n = (int64_t) 1 << l;
		add_case(v, false, 1, n, 1, 1, "1D " + std::to_string(n));
	}
	for (int l = 8; l <= 12; l++) {
		int64_t     n = (int64_t) 1 << l;
		std::string s = std::to_string(n);
		add_case(v, false, 2, n, n, 1, "2D " + s + "^2");
	}
	for (int l = 5; l <= 9; l++) {
		int64_t     n = (int64_t) 1 << l;
		std::string s = std::to_string(n);
		add_case(v, false, 3, n, n, n, "3D " + s + "^3");
	}
	add_case(v, false, 3, 32, 256, 512, "3D 32x256x512");
	add_case(v, false, 3, 512, 64, 32, "3D 512x64x32");
	for (int l : { 10, 12, 13, 14, 17, 20, 24 }) {
		int64_t n = (int64_t) 1 << l;
		add_case(v, true, 1, n, 1, 1, "1D " + std::to_string(n));
	}
	add_case(v, true, 2, 1024, 1024, 1, "2D 1024^2");
	add_case(v, true, 2, 4096, 4096, 1, "2D 4096^2");
	add_case(v, true, 3, 128, 128, 128, "3D 128^3");
	add_case(v, true, 3, 256, 256, 256, "3D 256^3");
	return v;
}

// list_cases prints the selected cases with their batch, pass count and
// bytes read + written per pass (no GPU needed: --list).
static int
list_cases(const char *only)
{
	Bench b;
	b.copy_gbs = 1.0; // floors unused here
	printf("%-15s %4s %10s %6s %11s %11s\n", "case", "kind", "batch",
	    "passes", "MiB f16", "MiB f32");
	for (const Case &c : all_cases()) {
		if (!selected(only, c.name))
			continue;
		Row r;
		r.c = c;
		bench_floors(b, r);
		printf("%-15s %4s %10lld %6d %11.1f %11.1f\n", c.name.c_str(),
		    c.r2c ? "R2C" : "C2C", (long long) c.batch, r.passes,
		    r.bytes16 / 1048576.0, r.bytes32 / 1048576.0);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	const char                *json = NULL, *only = NULL;
	bool                       list = false, conv_only = false;
	Bench                      b;
	static const struct option opts[] = {
		{ "quick", no_argument, NULL, 'q' },
		{ "noerr", no_argument, NULL, 'n' },
		{ "ours", no_argument, NULL, 'o' },
		{ "list", no_argument, NULL, 'l' },
		{ "conv", no_argument, NULL, 'c' },
		{ "only", required_argument, NULL, 'O' },
		{ "json", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;
	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'q':
			b.quick = true;
			break;
		case 'n':
			b.noerr = true;
			break;
		case 'o':
			b.ours = true;
			break;
		case 'l':
			list = true;
			break;
		case 'c':
			conv_only = true;
			break;
		case 'O':
			only = optarg;
			break;
		case 'j':
			json = optarg;
			break;
		default:
			fprintf(stderr,
			    "usage: kernels [--quick] [--noerr] [--ours] "
			    "[--list] [--conv] [--only NAMES] [--json FILE]\n");
			return 2;
		}
	}
	if (optind + 1 == argc)
		json = argv[optind]; // the JSON path as the one operand
	else if (optind < argc) {
		fprintf(stderr, "kernels: unexpected operand '%s'\n",
		    argv[optind + 1]);
		return 2;
	}
	if (b.quick)
		b.runs = 20;
	b.vk_version = bench_vk_version();
	if (list)
		return list_cases(only);
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "kernels: no CUDA device\n");
		return 77;
	}
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	b.device = prop.name;
	// the GPU's UUID, so that runs on different lent machines of one
	// model can be told apart (timings have differed between them)
	char uuid[48];
	int  u = snprintf(uuid, sizeof uuid, "GPU-");
	for (int i = 0; i < 16; i++)
		u += snprintf(uuid + u, sizeof uuid - (size_t) u, "%s%02x",
		    i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
		    (unsigned) (unsigned char) prop.uuid.bytes[i]);
	b.device_uuid = uuid;
	CK(cudaStreamCreate(&b.st));

	// Inputs: the same random data for every shape (R2C reads the first
	// values as reals).
	b.h16.resize((size_t) kMaxPoints * 2);
	b.h32.resize((size_t) kMaxPoints * 2);
	for (int64_t i = 0; i < kMaxPoints * 2; i++) {
		double v = urand();
		b.h16[i] = __float2half_rn((float) v);
		b.h32[i] = (float) v;
	}
	CK(cudaMalloc(&b.in16, kMaxPoints * 4));
	CK(cudaMalloc(&b.out16, kMaxPoints * 4));
	CK(cudaMalloc(&b.in32, kMaxPoints * 8));
	CK(cudaMalloc(&b.out32, kMaxPoints * 8));
	b.ws_cap = kMaxPoints * 8;
	CK(cudaMalloc(&b.ws, b.ws_cap));
	if (b.vk_version != 0)
		CK(cudaMalloc(&b.vkin, kMaxPoints * 8));
	CK(cudaMemcpy(
	    b.in16, b.h16.data(), kMaxPoints * 4, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(
	    b.in32, b.h32.data(), kMaxPoints * 8, cudaMemcpyHostToDevice));

	// Copy rate: bytes read + written per second, 512 MiB (and 256 MiB).
	b.copy_ms = time_it(
	    [&] {
		    CK(cudaMemcpyAsync(b.out32, b.in32, kPoints * 8,
		        cudaMemcpyDeviceToDevice, b.st));
	    },
	    b.st, b.runs);
	b.copy_gbs  = 2.0 * kPoints * 8 / (b.copy_ms * 1e-3) / 1e9;
	b.copy16_ms = time_it(
	    [&] {
		    CK(cudaMemcpyAsync(b.out16, b.in16, kPoints * 4,
		        cudaMemcpyDeviceToDevice, b.st));
	    },
	    b.st, b.runs);
	// progress on stderr as each case finishes, so that a run cut short
	// (a time limit) still has its floors: the copy rate first, then each
	// case's passes and fp16 floor with its times
	fprintf(stderr, "copy: %.0f GB/s (device to device, read + written)\n",
	    b.copy_gbs);

	std::vector<Row>     rows;
	std::vector<ConvRow> conv;
	for (const Case &c : all_cases()) {
		if (!selected(only, c.name))
			continue;
		Row r;
		r.c = c;
		bench_floors(b, r);
		if (!b.ours && bench_conv_case(c.name)) {
			ConvRow v;
			v.c      = c;
			v.passes = r.passes;
			bench_conv_row(b, v);
			fprintf(stderr,
			    "%-15s conversion: f32 fused %.4f sep %.4f cuf32 "
			    "%.4f | int8 fused %.4f sep %.4f cuf32 %.4f\n",
			    c.name.c_str(), v.r[CV_F32_FUSED].ms,
			    v.r[CV_F32_SEPARATE].ms, v.r[CV_F32_CUFFT].ms,
			    v.r[CV_I8_FUSED].ms, v.r[CV_I8_SEPARATE].ms,
			    v.r[CV_I8_CUFFT].ms);
			conv.push_back(v);
		}
		if (conv_only)
			continue;
		bench_run_row(b, r);
		const Result *x = r.r;
		fprintf(stderr,
		    "%-15s p %d floor %.4f | tc16 %.4f (%.2e) cuf16 %.4f "
		    "(%.2e) vkf16 %.4f (%.2e) | sp16 %.4f (%.2e) cuf32 %.4f "
		    "(%.2e) vkf32 %.4f (%.2e)\n",
		    c.name.c_str(), r.passes, r.floor16, x[ALG_TC16].ms,
		    x[ALG_TC16].err, x[ALG_CU16].ms, x[ALG_CU16].err,
		    x[ALG_VK16].ms, x[ALG_VK16].err, x[ALG_SP16].ms,
		    x[ALG_SP16].err, x[ALG_CU32].ms, x[ALG_CU32].err,
		    x[ALG_VK32].ms, x[ALG_VK32].err);
		rows.push_back(r);
	}

	if (json != NULL && bench_json(b, rows, conv, json) != 0) {
		perror(json);
		return 1;
	}
	if (!conv_only)
		bench_table(b, rows);
	bench_conv_table(b, conv);
	return 0;
}
