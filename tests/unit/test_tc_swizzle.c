// SPDX-License-Identifier: MIT
//
// test_tc_swizzle.c — host unit test of the tensor-core pass kernels'
// shared-memory swizzles (kernels/tc.h fftd__tc_swz4/8): they must be linear
// bijections within each 32-word (16-word) row that make every warp-wide
// access pattern of the pass kernels (kernels/tc16_pass.cuh) hit 32 distinct
// banks; and the fused real steps' offset algebra (kernels/tc_real.cuh)
// must give every pair's points. A model of each pattern's indices; no GPU
// needed.

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tc.h"

// ---- shared-memory bank conflicts of every kernel access pattern --------

typedef uint32_t (*swz_fn)(uint32_t);

static uint32_t
elem_off(int e, uint32_t rs, uint32_t cs)
{
	return 8u * rs * ((e >> 1) & 1) + cs * (e & 1) + 8u * cs * (e >> 2);
}

// Wavefronts a warp needs for idx[0..31]: 4-byte words over 32 banks (whole
// warp), or 8-byte words over 16 bank pairs (each half-warp separately).
static int
wavefronts(const uint32_t *idx, int bytes, swz_fn swz)
{
	int worst  = 0;
	int groups = bytes == 4 ? 1 : 2, lanes = 32 / groups,
	    banks = bytes == 4 ? 32 : 16;
	for (int h = 0; h < groups; h++) {
		for (int b = 0; b < banks; b++) {
			uint32_t seen[32];
			int      ns = 0;
			for (int l = h * lanes; l < (h + 1) * lanes; l++) {
				uint32_t p = swz(idx[l]);
				if ((int) (p % (uint32_t) banks) != b)
					continue;
				int dup = 0;
				for (int s = 0; s < ns; s++)
					dup |= seen[s] == p;
				if (!dup)
					seen[ns++] = p;
			}
			if (ns > worst)
				worst = ns;
		}
	}
	return worst;
}

// ip_pos: where the in-place column passes of 4096 points (tc16_smem.cuh,
// IP) keep point k = kb + 256 ka of an FFT: ka + 16 kb.
static uint32_t
ip_pos(uint32_t k)
{
	return 16 * (k % 256) + k / 256;
}

// tile_worst: the worst wavefront count of level 2b's tensor-core tiles
// (tc16_pass.cuh) of RR groups b: the tile (kb0, b) at rs kb0 + bs b, rows
// kb step rs, columns step cs (a lane's part rs g + cs 2t, its elements at
// elem_off(e, rs, cs)), for kb0 = 0, kb0_step, ... below 256.
static int
tile_worst(int RR, int kb0_step, uint32_t rs, uint32_t cs, uint32_t bs,
    int bytes, swz_fn swz)
{
	uint32_t idx[32];
	int      worst = 1;
	for (int kb0 = 0; kb0 < 256; kb0 += kb0_step)
		for (int b = 0; b < RR; b++)
			for (int e = 0; e < 8; e++) {
				for (int l = 0; l < 32; l++) {
					uint32_t g = (uint32_t) l >> 2,
					         t = (uint32_t) l & 3;
					idx[l]     = rs * ((uint32_t) kb0 + g)
					    + bs * (uint32_t) b + cs * 2 * t
					    + elem_off(e, rs, cs);
				}
				int w = wavefronts(idx, bytes, swz);
				if (w > worst)
					worst = w;
			}
	return worst;
}

// check_config returns the worst wavefront count of every shared-memory
// access of a pass kernel of that shape except the global<->shared copies,
// whose worst goes to *copies. ip: the in-place column pass (level 1 writes
// where it read; level 2 tiles with rows kb step 16, columns a step 1;
// copy_out reads point n at ip_pos(n)); with !strided the in-place
// contiguous pass of 32768 points (IPC: level 1 writes where it read, level
// 2a items (alpha, kb) step beta by 16, level 2b tiles have rows kb step R
// and columns alpha step 1).
static int
check_config(int L, int C, int NT, int bytes, swz_fn swz, int strided, int ip,
    int *copies)
{
	int      R = L / 256, worst = 1, cworst = 1;
	uint32_t idx[32];
#define CHECK()                                                                \
	do {                                                                   \
		int w_ = wavefronts(idx, bytes, swz);                          \
		if (w_ > worst)                                                \
			worst = w_;                                            \
	} while (0)
	for (int warp = 0; warp < NT / 32; warp++) {
		// copies (in, and out through the in-place layout)
		for (int j = 0; j < C * L / NT; j++)
			for (int o = 0; o < 1 + ip; o++) {
				for (int l = 0; l < 32; l++) {
					int      tid = warp * 32 + l;
					uint32_t n   = (uint32_t) (tid / C
                                            + j * (NT / C));
					idx[l]       = strided
					          ? (uint32_t) ((tid % C) * L)
                                                + (o ? ip_pos(n) : n)
					          : (uint32_t) (tid + j * NT);
				}
				int w_ = wavefronts(idx, bytes, swz);
				if (w_ > cworst)
					cworst = w_;
			}
		// level 1 (gather and write) for a few (f, a)
		for (int f = 0; f < C; f += (C > 1 ? C - 1 : 1))
			for (int a = 0; a < R; a += (R > 2 ? R / 2 - 1 : 1))
				for (int e = 0; e < 8; e++) {
					for (int l = 0; l < 32; l++) {
						int g = l >> 2, t = l & 3;
						idx[l] = (uint32_t) (f * L + a
						             + R * (g + 32 * t))
						    + elem_off(e, R, 16 * R);
					}
					CHECK();
					for (int l = 0; l < 32; l++) {
						int g = l >> 2, t = l & 3;
						idx[l] = (uint32_t) (f * L
						             + 256 * a + g
						             + 32 * t)
						    + elem_off(e, 1, 16);
					}
					CHECK();
				}
		// level 2
		if (R >= 2 && R <= 8) {
			for (int j = 0; j < C * 256 / NT; j++)
				for (int x = 0; x < R; x++) {
					for (int l = 0; l < 32; l++) {
						int pidx
						    = warp * 32 + l + j * NT;
						idx[l]
						    = (uint32_t) ((pidx / 256)
						            * L
						        + pidx % 256 + 256 * x);
					}
					CHECK();
				}
		}
		if (ip && !strided) {
			int RR = R / 16;
			for (int j = 0; j < C * 4096 / NT; j++)
				for (int b = 0; b < RR; b++) {
					for (int l = 0; l < 32; l++) {
						int i = warp * 32 + l + j * NT;
						idx[l]
						    = (uint32_t) ((i / 4096) * L
						        + i % 16
						        + R * ((i / 16) % 256)
						        + 16 * b);
					}
					CHECK();
				}
			int w_ = tile_worst(
			    RR, 48, (uint32_t) R, 1, 16, bytes, swz);
			if (w_ > worst)
				worst = w_;
		} else if (ip) {
			for (int u = 0; u < 16 * C; u += 5)
				for (int e = 0; e < 8; e++) {
					for (int l = 0; l < 32; l++) {
						int g = l >> 2, t = l & 3;
						idx[l]
						    = (uint32_t) ((u / 16) * L
						          + (u % 16) * 256
						          + 16 * g + 2 * t)
						    + elem_off(e, 16, 1);
					}
					CHECK();
				}
		} else if (R >= 16) {
			int RR = R / 16;
			// level 2b's reads, and (fused R2C) its writes to buf
			int w1 = tile_worst(RR, 80, 1, 256, 4096, bytes, swz),
			    w2 = tile_worst(RR, 80, 1, 256 * (uint32_t) RR, 256,
			        bytes, swz);
			if (w1 > worst)
				worst = w1;
			if (w2 > worst)
				worst = w2;
		}
	}
#undef CHECK
	*copies = cworst;
	return worst;
}

static uint32_t
swz4(uint32_t p)
{
	return fftd__tc_swz4(p);
}
static uint32_t
swz8(uint32_t p)
{
	return fftd__tc_swz8(p);
}

static void
test_swizzle(void **state)
{
	(void) state;
	// bijections that stay inside each 32-word (16-word) row
	for (uint32_t p = 0; p < 65536; p++) {
		assert_int_equal(fftd__tc_swz4(p) >> 5, p >> 5);
		assert_int_equal(fftd__tc_swz8(p) >> 4, p >> 4);
		assert_int_equal(fftd__tc_swz4(fftd__tc_swz4(p)),
		    p); // XOR with f(high bits): an involution
		assert_int_equal(fftd__tc_swz8(fftd__tc_swz8(p)), p);
	}
	// linear: swz(a ^ b) = swz(a) ^ swz(b) ^ swz(0)
	for (uint32_t a = 1; a < 65536; a = a * 3 + 7)
		for (uint32_t b = 5; b < 65536; b = b * 5 + 3)
			assert_int_equal(fftd__tc_swz4(a ^ b),
			    fftd__tc_swz4(a) ^ fftd__tc_swz4(b));
	// contiguous passes 256 .. 32768 (split16: 16384), on their kernels'
	// warps (tc.h)
	for (int l = 8; l <= 15; l++) {
		int L = 1 << l, C = fftd__tc_block_ffts(L, 0, 4, 0);
		int W4 = fftd__tc_block_warps(L, 0, 4, C),
		    W8 = fftd__tc_block_warps(L, 0, 8, C);
		int cp;
		// tc16's 32768 points in place (tc16_pass.cuh, IPC)
		int ipc = !fftd__tc_block_scratch(L, C, 4);
		assert_int_equal(ipc, L == 32768);
		assert_int_equal(
		    check_config(L, C, W4 * 32, 4, swz4, 0, ipc, &cp), 1);
		assert_int_equal(cp, 1);
		if (L > FFTD__TC_MAX_LEN_SPLIT16)
			continue;
		assert_int_equal(
		    check_config(L, C, W8 * 32, 8, swz8, 0, 0, &cp), 1);
		assert_int_equal(cp, 1);
	}
	for (int wide = 0; wide < 2; wide++)
		for (int l = 8; l <= 12; l++) {
			int L  = 1 << l;
			int C4 = fftd__tc_block_ffts(L, 1, 4, wide),
			    C8 = fftd__tc_block_ffts(L, 1, 8, wide);
			// the kernels' block warps (tc.h); the wide
			// 4096-point columns run in place (IP): tc16 on 32
			// warps, 16 checked as well; split16 on 16
			int W4  = fftd__tc_block_warps(L, 1, 4, C4),
			    W8  = fftd__tc_block_warps(L, 1, 8, C8);
			int ip4 = wide && L == 4096, p4, p8;
			assert_int_equal(
			    ip4, !fftd__tc_block_scratch(L, C4, 4));
			for (int w2 = 0; w2 < 1 + ip4; w2++) {
				int nt4 = (w2 ? 16 : W4) * 32;
				int c4  = check_config(
				     L, C4, nt4, 4, swz4, 1, ip4, &p4);
				print_message("strided%s L=%d: tc16 C=%d, %d "
				              "threads: worst %d (copies %d)\n",
				    wide ? " wide" : "", L, C4, nt4, c4, p4);
				assert_int_equal(c4, 1);
				assert_int_equal(p4, 1);
			}
			// split16's wide 4096-point columns run in place too,
			// 4 of them (swz8's mask for bit 4 is 1, not 14 as
			// before, for their level 2 and copy-out)
			int ip8 = wide && L == 4096;
			assert_int_equal(
			    ip8, !fftd__tc_block_scratch(L, C8, 8));
			int c8 = check_config(
			    L, C8, W8 * 32, 8, swz8, 1, ip8, &p8);
			print_message("strided%s L=%d: split16 C=%d worst %d "
			              "(copies %d)\n",
			    wide ? " wide" : "", L, C8, c8, p8);
			assert_int_equal(c8, 1);
			assert_int_equal(p8, 1);
		}
}

// The fused 1D real steps (kernels/tc_real.cuh, RowSteps): for rows of L
// = h points, C a block, NT threads, step j of thread tid takes pair k =
// K0 + lane + dk(j) of row F0 + df(j) (w0 = tid & ~31 = F0 h/2 + K0); the
// kernel forms the point of k and of its partner h - k (0 for k = 0) as the
// thread's base XOR pos(j), with a constant for lane 0 of K0 = 0 warps at
// steps of dk(j) > 0. Checked against the plain indices: every pair of
// every row is taken once, at the right points; the lane's points take one
// wavefront, the partners (reversed and moved by one) at most two.
static int
check_real_rows(int L, int C, int NT, int bytes, swz_fn swz, int *pworst)
{
	const uint32_t H = (uint32_t) L / 2, J = (uint32_t) (C * L / 2 / NT);
	static unsigned char seen[16 * 8192];
	int                  bad = 0, dworst = 1, mworst = 1;
	for (uint32_t i = 0; i < (uint32_t) (C * L); i++)
		seen[i] = 0;
	for (uint32_t j = 0; j < J; j++) {
		const uint32_t df = j * NT / H, dk = j * NT % H;
		const uint32_t pos = df * L + dk;
		for (int warp = 0; warp < NT / 32; warp++) {
			uint32_t di[32], mi[32];
			for (uint32_t lane = 0; lane < 32; lane++) {
				const uint32_t w0 = (uint32_t) warp * 32,
				               K0 = w0 % H, F0 = w0 / H,
				               kl = K0 + lane;
				const uint32_t pm = lane
				    ? (((L - 32) ^ K0) | (32 - lane))
				    : K0 ? ((L - 32) ^ (K0 - 32))
				         : 0;
				const uint32_t d  = (F0 * L + kl) ^ pos;
				const uint32_t m  = dk != 0 && kl == 0
				     ? df * L + L - dk
				     : (F0 * L + pm) ^ pos;
				// the plain indices
				const uint32_t f = F0 + df, k = kl + dk;
				bad += f >= (uint32_t) C || k >= H / 2 * 2
				    || d != f * L + k
				    || m != f * L + (k ? L - k : 0);
				if (d < (uint32_t) (C * L))
					seen[d]++;
				di[lane] = d;
				mi[lane] = m;
			}
			int wd = wavefronts(di, bytes, swz),
			    wm = wavefronts(mi, bytes, swz);
			dworst = wd > dworst ? wd : dworst;
			mworst = wm > mworst ? wm : mworst;
		}
	}
	// each k < h/2 of each row once (h/2 .. h are partners)
	for (int f = 0; f < C; f++)
		for (uint32_t k = 0; k < (uint32_t) L; k++)
			bad += seen[f * L + k] != (k < H ? 1 : 0);
	*pworst = mworst;
	return bad ? -bad : dworst;
}

static void
test_real_rows(void **state)
{
	(void) state;
	for (int l = 8; l <= 13; l++) { // h = 256 .. FFTD__TC_MAX_FUSED_REAL
		int L = 1 << l, C = fftd__tc_block_ffts(L, 0, 4, 0), mw;
		assert_true(L <= FFTD__TC_MAX_FUSED_REAL);
		for (int b = 4; b <= 8; b += 4) {
			int NT = fftd__tc_block_warps(L, 0, b, C) * 32;
			int dw = check_real_rows(
			    L, C, NT, b, b == 4 ? swz4 : swz8, &mw);
			print_message("real rows L=%d C=%d NT=%d %d-byte: "
			              "points %d, partners %d wavefronts\n",
			    L, C, NT, b, dw, mw);
			assert_int_equal(dw, 1);
			assert_true(mw >= 1 && mw <= 2);
		}
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swizzle),
		cmocka_unit_test(test_real_rows),
	};
	return cmocka_run_group_tests_name("tc_swizzle", tests, NULL, NULL);
}
