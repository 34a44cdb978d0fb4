// SPDX-License-Identifier: MIT
//
// kernels_report.cu — bench/kernels' figures: the pass count and memory
// floor of every case, the one-line-per-size text table and the JSON with
// every figure (bench/json.c). The pass rule (also in bench/README.md): the
// fewest read+write passes over memory when one pass transforms up to 2^14
// points in one block's shared memory; an R2C case counts as its
// half-length complex transform (the real pre/post step fused into a pass).
// The floor is passes x (bytes read + bytes written by one pass) / the
// device-to-device copy rate measured in the same run.

#include "json.h"
#include "kernels.h"

#include <cstring>

static const int kPassLog2 = 14; // points per pass in shared memory: 2^14

// log2 of a power of two.
static int
ilog2(int64_t n)
{
	int l = 0;
	while (((int64_t) 1 << l) < n)
		l++;
	return l;
}

// Passes for one axis of n points: 1 up to 2^14, then one more per 14 bits.
static int
axis_passes(int64_t n)
{
	return std::max(1, (ilog2(n) + kPassLog2 - 1) / kPassLog2);
}

// case_passes: 1 when the whole transform fits one pass; 1D: ceil(log2 n /
// 14); 2D: one pass per axis (more for an axis over 2^14); 3D: 2 when two
// axes together fit one pass (and the third alone), else one pass per axis.
static int
case_passes(const Case &c)
{
	int64_t d[3] = { c.dims[0], c.dims[1], c.dims[2] };
	if (c.r2c)
		d[c.rank - 1] = std::max<int64_t>(1, d[c.rank - 1] / 2);
	int64_t total = 1;
	for (int i = 0; i < c.rank; i++)
		total *= d[i];
	if (ilog2(total) <= kPassLog2)
		return 1;
	if (c.rank == 1)
		return axis_passes(d[0]);
	if (c.rank == 2)
		return axis_passes(d[0]) + axis_passes(d[1]);
	int64_t lim = (int64_t) 1 << kPassLog2;
	for (int i = 0; i < 3; i++) {
		int64_t pair = total / d[i]; // the other two axes
		if (pair <= lim && d[i] <= lim)
			return 2;
	}
	return axis_passes(d[0]) + axis_passes(d[1]) + axis_passes(d[2]);
}

void
bench_floors(const Bench &b, Row &r)
{
	const Case &c   = r.c;
	double      in  = (double) (c.per_in() * c.batch);
	double      out = (double) (c.per_out() * c.batch);
	r.passes        = case_passes(c);
	// fp16: 4-byte complex points, 2-byte reals; fp32 twice that.
	r.bytes16 = (c.r2c ? 2.0 * in : 4.0 * in) + 4.0 * out;
	r.bytes32 = 2.0 * r.bytes16;
	r.floor16 = r.passes * r.bytes16 / (b.copy_gbs * 1e9) * 1e3;
	r.floor32 = r.passes * r.bytes32 / (b.copy_gbs * 1e9) * 1e3;
}

// best_peer returns the index (ALG_*) of the fastest of the two peers that
// ran and computed right, or -1.
static int
best_peer(const Row &r, int a, int b)
{
	const Result &x = r.r[a], &y = r.r[b];
	bool          xa = x.ok && !x.wrong, ya = y.ok && !y.wrong;
	if (xa && (!ya || x.ms <= y.ms))
		return a;
	return ya ? b : -1;
}

// vs_best: the best peer's ms over ours (> 1: ours is faster), NaN when
// either is missing.
static double
vs_best(const Row &r, int ours, int peer)
{
	if (peer < 0 || !r.r[ours].ok)
		return NAN;
	return r.r[peer].ms / r.r[ours].ms;
}

// ms_cell: "0.123" (with '!' when the result was wrong), "unsupported",
// or "-" (not run; the reason is listed under the table).
static std::string
ms_cell(const Result &x)
{
	char s[32];
	if (x.ok)
		snprintf(s, sizeof s, "%.3f%s", x.ms, x.wrong ? "!" : "");
	else
		snprintf(
		    s, sizeof s, "%s", x.unsupported ? "unsupported" : "-");
	return s;
}

// err_cell: the relative L2 error, "inf" for non-finite output, or "-".
static std::string
err_cell(const Result &x)
{
	char s[32];
	if (x.ok && std::isfinite(x.err))
		snprintf(s, sizeof s, "%.1e", x.err);
	else
		snprintf(
		    s, sizeof s, "%s", x.ok && std::isinf(x.err) ? "inf" : "-");
	return s;
}

// num_cell: v in fmt, or "-" when it is not finite.
static std::string
num_cell(double v, const char *fmt)
{
	char s[32];
	if (std::isfinite(v))
		snprintf(s, sizeof s, fmt, v);
	else
		snprintf(s, sizeof s, "-");
	return s;
}

static const char *const kAlgName[ALG_N] = { "tc16", "cuFFT f16", "VkFFT f16",
	"split16", "cuFFT f32", "VkFFT f32", "tc16 narrow", "split16 narrow" };

void
bench_table(const Bench &b, const std::vector<Row> &rows)
{
	const bool vk = b.vk_version != 0;
	printf("bench/kernels on %s (%s): 2^26 points per launch (C2C: "
	       "complex points, R2C: real inputs; 1D 2^27 and 3D 512^3: one "
	       "2^27-point transform), median of %d runs; D2D copy %.0f GB/s "
	       "(read+write)\n",
	    b.device.c_str(), b.device_uuid.c_str(), b.runs, b.copy_gbs);
	if (vk)
		printf("VkFFT %d.%d.%d, CUDA backend (f16: fp16 storage, fp32 "
		       "arithmetic)\n",
		    b.vk_version / 10000, b.vk_version / 100 % 100,
		    b.vk_version % 100);
	else
		printf(
		    "VkFFT: not built (make bench-kernels VKFFT_DIR=/path/to/"
		    "VkFFT): no VkFFT columns\n");
	printf("p: passes (up to 2^14 points per pass); floor: p x bytes "
	       "read+written / copy rate, fp16 (fp32: 2x); %%fl: floor / tc16; "
	       "x: best peer ms / ours (>1: ours faster); '!': wrong (rel L2 > "
	       "%.0e f16, %.0e f32), not ranked\n",
	    kWrong16, kWrong32);
	printf(
	    "%-15s %1s %6s | %11s %7s", "size", "p", "floor", "tc16", "cuf16");
	if (vk)
		printf(" %7s", "vkf16");
	printf(" %4s %5s | %7s %7s", "%fl", "x", "e tc16", "e cuf16");
	if (vk)
		printf(" %7s", "e vkf16");
	printf(" | %11s %7s", "split16", "cuf32");
	if (vk)
		printf(" %7s", "vkf32");
	printf(" %5s | %7s %7s", "x", "e sp16", "e cuf32");
	if (vk)
		printf(" %7s", "e vkf32");
	printf("\n");
	for (const Row &r : rows) {
		const Result *x   = r.r;
		int           b16 = best_peer(r, ALG_CU16, ALG_VK16);
		int           b32 = best_peer(r, ALG_CU32, ALG_VK32);
		double        pct
		    = x[ALG_TC16].ok ? 100.0 * r.floor16 / x[ALG_TC16].ms : NAN;
		printf("%-15s %1d %6.3f | %11s %7s", r.c.name.c_str(), r.passes,
		    r.floor16, ms_cell(x[ALG_TC16]).c_str(),
		    ms_cell(x[ALG_CU16]).c_str());
		if (vk)
			printf(" %7s", ms_cell(x[ALG_VK16]).c_str());
		printf(" %4s %5s | %7s %7s", num_cell(pct, "%.0f").c_str(),
		    num_cell(vs_best(r, ALG_TC16, b16), "%.2f").c_str(),
		    err_cell(x[ALG_TC16]).c_str(),
		    err_cell(x[ALG_CU16]).c_str());
		if (vk)
			printf(" %7s", err_cell(x[ALG_VK16]).c_str());
		printf(" | %11s %7s", ms_cell(x[ALG_SP16]).c_str(),
		    ms_cell(x[ALG_CU32]).c_str());
		if (vk)
			printf(" %7s", ms_cell(x[ALG_VK32]).c_str());
		printf(" %5s | %7s %7s",
		    num_cell(vs_best(r, ALG_SP16, b32), "%.2f").c_str(),
		    err_cell(x[ALG_SP16]).c_str(),
		    err_cell(x[ALG_CU32]).c_str());
		if (vk)
			printf(" %7s", err_cell(x[ALG_VK32]).c_str());
		printf("\n");
	}
	bool any = false;
	for (const Row &r : rows)
		for (int a = 0; a < ALG_N; a++) {
			const Result &x = r.r[a];
			if (x.ok || x.unsupported || x.note.empty()
			    || x.note == "not built")
				continue;
			if (!any)
				printf("not run:\n");
			any = true;
			printf("  %s %s: %s\n", r.c.name.c_str(), kAlgName[a],
			    x.note.c_str());
		}
	printf("column passes with 32-byte runs (FFTD_TC_WIDE=0) instead, "
	       "ms:\n");
	for (const Row &r : rows)
		if (r.r[ALG_TC16_NARROW].ok || r.r[ALG_SP16_NARROW].ok)
			printf("%-15s | tc16 %s -> %s | split16 %s -> %s\n",
			    r.c.name.c_str(), ms_cell(r.r[ALG_TC16]).c_str(),
			    ms_cell(r.r[ALG_TC16_NARROW]).c_str(),
			    ms_cell(r.r[ALG_SP16]).c_str(),
			    ms_cell(r.r[ALG_SP16_NARROW]).c_str());
}

// json_int writes `, "key": v` for a count (exact, unlike bench_json_num's
// 6 digits).
static void
json_int(FILE *f, const char *key, int64_t v)
{
	fprintf(f, ", \"%s\": %lld", key, (long long) v);
}

// JSON keys of the algorithms, in ALG_* order.
static const char *const kAlgKey[ALG_N] = { "tc16", "cufft_f16", "vkfft_f16",
	"split16", "cufft_f32", "vkfft_f32", "tc16_narrow", "split16_narrow" };

// json_result writes one algorithm's figures: `"key": {...}`.
static void
json_result(FILE *f, const Row &r, int a)
{
	const Result &x    = r.r[a];
	bool          half = a == ALG_TC16 || a == ALG_CU16 || a == ALG_VK16
	    || a == ALG_TC16_NARROW;
	double bytes = half ? r.bytes16 : r.bytes32;
	double fl    = half ? r.floor16 : r.floor32;
	fprintf(f, "      \"%s\": {\"ok\": %s", kAlgKey[a],
	    x.ok ? "true" : "false");
	fprintf(f, ", \"unsupported\": %s, \"wrong\": %s",
	    x.unsupported ? "true" : "false", x.wrong ? "true" : "false");
	bench_json_field(f, "ms", x.ok ? x.ms : NAN);
	bench_json_field(f, "gbs", x.ok ? bytes / (x.ms * 1e-3) / 1e9 : NAN);
	bench_json_field(f, "pct_floor", x.ok ? 100.0 * fl / x.ms : NAN);
	bench_json_field(f, "rel_l2", x.ok ? x.err : NAN);
	fprintf(f, ", \"note\": ");
	bench_json_str(f, x.note.c_str());
	fprintf(f, "}");
}

int
bench_json(const Bench &b, const std::vector<Row> &rows,
    const std::vector<ConvRow> &conv, const char *path)
{
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	fprintf(f, "{\n  \"device\": ");
	bench_json_str(f, b.device.c_str());
	fprintf(f, ",\n  \"device_uuid\": ");
	bench_json_str(f, b.device_uuid.c_str());
	json_int(f, "points_per_launch", kPoints);
	json_int(f, "runs", b.runs);
	bench_json_field(f, "copy_ms_512MiB", b.copy_ms);
	bench_json_field(f, "copy_gbs", b.copy_gbs);
	bench_json_field(f, "copy_ms_256MiB", b.copy16_ms);
	json_int(f, "pass_points", (int64_t) 1 << kPassLog2);
	bench_json_field(f, "wrong_rel_l2_f16", kWrong16);
	bench_json_field(f, "wrong_rel_l2_f32", kWrong32);
	fprintf(f, ",\n  \"vkfft_version\": ");
	if (b.vk_version != 0) {
		char v[32];
		snprintf(v, sizeof v, "%d.%d.%d", b.vk_version / 10000,
		    b.vk_version / 100 % 100, b.vk_version % 100);
		bench_json_str(f, v);
	} else {
		fprintf(f, "null");
	}
	fprintf(f, ",\n  \"cases\": [\n");
	for (size_t i = 0; i < rows.size(); i++) {
		const Row &r   = rows[i];
		int        b16 = best_peer(r, ALG_CU16, ALG_VK16);
		int        b32 = best_peer(r, ALG_CU32, ALG_VK32);
		fprintf(f, "    {\"name\": ");
		bench_json_str(f, r.c.name.c_str());
		fprintf(f, ", \"kind\": \"%s\", \"rank\": %d, \"dims\": [",
		    r.c.r2c ? "R2C" : "C2C", r.c.rank);
		for (int d = 0; d < r.c.rank; d++)
			fprintf(f, "%s%lld", d ? ", " : "",
			    (long long) r.c.dims[d]);
		fprintf(f, "]");
		json_int(f, "batch", r.c.batch);
		json_int(f, "passes", r.passes);
		json_int(f, "bytes_f16", (int64_t) r.bytes16);
		json_int(f, "bytes_f32", (int64_t) r.bytes32);
		bench_json_field(f, "floor_f16_ms", r.floor16);
		bench_json_field(f, "floor_f32_ms", r.floor32);
		bench_json_field(
		    f, "tc16_vs_best_f16", vs_best(r, ALG_TC16, b16));
		bench_json_field(
		    f, "split16_vs_best_f32", vs_best(r, ALG_SP16, b32));
		fprintf(f, ",\n      \"best_f16_peer\": ");
		bench_json_str(f, b16 < 0 ? "" : kAlgKey[b16]);
		fprintf(f, ", \"best_f32_peer\": ");
		bench_json_str(f, b32 < 0 ? "" : kAlgKey[b32]);
		fprintf(f, ",\n      \"plan_tc16\": ");
		bench_json_str(f, r.desc16);
		fprintf(f, ", \"plan_split16\": ");
		bench_json_str(f, r.desc32);
		for (int a = 0; a < ALG_N; a++) {
			const Result &x = r.r[a];
			if (!x.ok && !x.unsupported && x.note.empty())
				continue; // not applicable (narrow: no short
				          // columns)
			fprintf(f, ",\n");
			json_result(f, r, a);
		}
		fprintf(f, "\n    }%s\n", i + 1 < rows.size() ? "," : "");
	}
	fprintf(f, "  ]");
	bench_conv_json(f, conv);
	fprintf(f, "\n}\n");
	return fclose(f) == 0 ? 0 : -1;
}
