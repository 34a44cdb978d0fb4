// SPDX-License-Identifier: MIT
//
// filter.c — the science of the example, as the GWOSC tutorial does it:
// Tukey windows, the noise PSD by Welch's method (one batched R2C on the
// daemon), its interpolation onto the full-length frequency grid, and the
// matched filter that whitens the data against the template and gives the
// SNR series. The FFTs themselves go through transform.c; reading the data
// is data.c's, reporting the peak gw150914.c's and plot.c's.

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "gw150914.h"

// gw_tukey fills w with scipy.signal.windows.tukey(m, alpha) (symmetric),
// written in scipy's order of operations so the windows agree to the bit.
void
gw_tukey(double *w, size_t m, double alpha)
{
	if (m == 1) {
		w[0] = 1;
		return;
	}
	double width = floor(alpha * (double) (m - 1) / 2.0);
	for (size_t i = 0; i < m; i++) {
		double x = (double) i;
		double r = 2.0 * x / alpha / (double) (m - 1);
		if (x <= width) {
			w[i] = 0.5 * (1 + cos(M_PI * (-1 + r)));
		} else if (x < (double) m - width - 1) {
			w[i] = 1;
		} else {
			w[i] = 0.5 * (1 + cos(M_PI * (-2.0 / alpha + 1 + r)));
		}
	}
}

// welch_psd is matplotlib.mlab.psd(x, Fs=fs, NFFT=nfft, window=tukey(nfft,
// 1/4), noverlap=nfft/2): one-sided density, DC and Nyquist not doubled,
// mean over segments. All segments go to the daemon as one batched R2C.
static int
welch_psd(job *j, const double *x, size_t n, double fs, size_t nfft,
    double *psd, const char *det)
{
	size_t          step = nfft / 2;
	size_t          nseg = (n - (nfft - step)) / step;
	size_t          nh   = nfft / 2 + 1;
	double         *w    = malloc(nfft * sizeof(double));
	double         *seg  = malloc(nseg * nfft * sizeof(double));
	double complex *spec = malloc(nseg * nh * sizeof(double complex));
	int             rv   = FFTD_ENOMEM;
	if (w == NULL || seg == NULL || spec == NULL) {
		goto out;
	}
	gw_tukey(w, nfft, 0.25);
	double sumw2 = 0;
	for (size_t i = 0; i < nfft; i++) {
		sumw2 += w[i] * w[i];
	}
	for (size_t k = 0; k < nseg; k++) {
		for (size_t i = 0; i < nfft; i++) {
			seg[k * nfft + i] = x[k * step + i] * w[i];
		}
	}
	char what[64];
	snprintf(
	    what, sizeof(what), "%s Welch segments (R2C x %zu)", det, nseg);
	rv = gw_r2c_batch(j, seg, spec, (int64_t) nfft, (int64_t) nseg, what);
	if (rv != FFTD_OK) {
		goto out;
	}
	for (size_t f = 0; f < nh; f++) {
		double acc = 0;
		for (size_t k = 0; k < nseg; k++) {
			double complex v = spec[k * nh + f];
			acc += creal(v) * creal(v) + cimag(v) * cimag(v);
		}
		// One-sided: fold negative frequencies in, except at DC and
		// Nyquist which have no mirror image.
		double fold = (f == 0 || f == nh - 1) ? 1 : 2;
		psd[f]      = acc * fold / (double) nseg / fs / sumw2;
	}
out:
	free(w);
	free(seg);
	free(spec);
	return rv;
}

// interp_psd is np.interp(abs(np.fft.fftfreq(n) * fs), freqs, psd) with
// freqs = arange(nfft/2+1) * fs/nfft. Both grids are multiples of fs/n, so
// the bracketing bin and fraction are computed exactly in integers.
static void
interp_psd(double *pv, size_t n, const double *psd, size_t nfft)
{
	for (size_t k = 0; k < n; k++) {
		size_t m   = k <= n / 2 ? k : n - k; // |f| = m fs/n
		size_t pos = m * nfft;               // |f| in fs/(n nfft)
		size_t b   = pos / n;
		if (b >= nfft / 2) {
			pv[k] = psd[nfft / 2];
			continue;
		}
		double t = (double) (pos % n) / (double) n;
		pv[k]    = psd[b] + t * (psd[b + 1] - psd[b]);
	}
}

// gw_matched_filter runs the tutorial's matched filter on one detector's
// strain x (n samples at fs): the Welch PSD, the windowed data FFT, the
// whitened correlation with the template (tfft, FFT(h d)/fs), its inverse
// FFT, and the SNR series with its peak (res; res->trace is the caller's
// to free). dwin is the Tukey(1/8) window of the data.
int
gw_matched_filter(job *j, const detector *det, const double *x, size_t n,
    double fs, const double *dwin, const double complex *tfft, result *res)
{
	size_t          nfft = (size_t) (4 * fs); // 4 s Welch segments
	double         *psd  = malloc((nfft / 2 + 1) * sizeof(double));
	double         *pv   = malloc(n * sizeof(double));
	double complex *buf  = malloc(n * sizeof(double complex));
	double complex *dfft = malloc(n * sizeof(double complex));
	double         *snr  = malloc(n * sizeof(double));
	char            what[64];
	int             rv = FFTD_ENOMEM;
	if (psd == NULL || pv == NULL || buf == NULL || dfft == NULL
	    || snr == NULL) {
		goto out;
	}
	rv = welch_psd(j, x, n, fs, nfft, psd, det->name);
	if (rv != FFTD_OK) {
		goto out;
	}
	interp_psd(pv, n, psd, nfft);

	// data_fft = fft(data * dwindow) / fs; the data is real, promoted
	// to complex for the C2C.
	for (size_t i = 0; i < n; i++) {
		buf[i] = x[i] * dwin[i];
	}
	snprintf(what, sizeof(what), "%s data (C2C forward)", det->name);
	rv = gw_c2c(
	    j, buf, dfft, (int64_t) n, FFTD_FORWARD, FFTD_NORM_NONE, what);
	if (rv != FFTD_OK) {
		goto out;
	}
	// optimal = data_fft * conj(template_fft) / psd; sigma^2 is the
	// template's own weighted power.
	double sigmasq = 0;
	for (size_t i = 0; i < n; i++) {
		buf[i] = dfft[i] / fs * conj(tfft[i]) / pv[i];
		sigmasq += (creal(tfft[i]) * creal(tfft[i])
		               + cimag(tfft[i]) * cimag(tfft[i]))
		    / pv[i];
	}
	double sigma = sqrt(fabs(sigmasq * (fs / (double) n)));

	// optimal_time = 2 * ifft(optimal) * fs, ifft normalised by 1/N.
	snprintf(
	    what, sizeof(what), "%s filter output (C2C inverse)", det->name);
	rv = gw_c2c(
	    j, buf, dfft, (int64_t) n, FFTD_INVERSE, FFTD_NORM_BY_N, what);
	if (rv != FFTD_OK) {
		goto out;
	}
	// SNR = |roll(optimal_time / sigma, n/2)|: the peak then marks the
	// end of the template, whose merger sits at its middle.
	res->snr = -1;
	for (size_t i = 0; i < n; i++) {
		double complex v = 2 * dfft[(i + n - n / 2) % n] * fs;
		snr[i]           = cabs(v / sigma);
		if (snr[i] > res->snr) {
			res->snr   = snr[i];
			res->index = i;
		}
	}
	res->trace = snr;
	snr        = NULL;
out:
	free(psd);
	free(pv);
	free(buf);
	free(dfft);
	free(snr);
	return rv;
}
