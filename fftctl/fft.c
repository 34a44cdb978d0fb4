// SPDX-License-Identifier: MIT
//
// fft.c — fftctl fft: transforms an array file through the daemon. A user
// of libfftd can read it as a worked example of planning and executing:
// fft_transform derives the plan from the input's shape and the options,
// run_batches splits the batch into requests the daemon accepts. Reading
// and writing the files is array.c's; options and connecting are main.c's
// (fftctl.h).

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fftctl.h"

// fftd__ctl_fft_help is fftctl fft --help.
const char fftd__ctl_fft_help[]
    = "usage: fftctl fft [OPTIONS] IN OUT\n"
      "\n"
      "Transforms the array in IN through the daemon and writes OUT. IN is\n"
      "a numpy .npy file unless --raw; OUT is written as .npy if its name\n"
      "ends in .npy, else as raw little-endian elements (complex ones as\n"
      "interleaved re, im).\n"
      "\n"
      "Axes: the last R axes (--rank, default 1) are transformed, the\n"
      "leading ones are a batch. The dtype sets the precision: <c16 and <f8\n"
      "are f64, <c8 and <f4 f32, <f2 f16; complex f16 is <f2 with a trailing\n"
      "axis of 2 (re, im), in and out. Real input to a c2c transform is\n"
      "promoted to complex, as numpy.fft.fft does.\n"
      "\n"
      "  --kind K          c2c (default); r2c: real in, last axis n/2+1 out;\n"
      "                    c2r: last axis m in, real n out\n"
      "  --inverse         inverse c2c, exp(+2 pi i jk/n); r2c is always\n"
      "                    forward, c2r always inverse\n"
      "  --norm N          none (default), by-n (1/N) or ortho (1/sqrt N),\n"
      "                    N the product of the transformed sizes; numpy's\n"
      "                    fft is none, its ifft and irfft by-n\n"
      "  --rank R          number of trailing axes transformed, 1..3\n"
      "  --n LAST          c2r: logical length of the last axis, default\n"
      "                    2*(m-1); m must equal LAST/2+1\n"
      "  --algorithm NAME  ask for one implementation: fftw, cufft, tc16,\n"
      "                    split16 (default: the daemon's choice, cufft on\n"
      "                    a GPU); tc16 (f16) and split16 (f32) do c2c,\n"
      "                    r2c and c2r of power-of-two sizes: --rank 1\n"
      "                    (from 256; real from 512), 2 (256 .. 4096\n"
      "                    each) or 3 (32 .. 512 each; real: last >= 64);\n"
      "                    `fftctl info` lists what the daemon serves\n"
      "  --tolerance X     relative L2 error accepted per transform (e.g.\n"
      "                    1e-3): the daemon runs the fastest algorithm\n"
      "                    whose error bound fits it, maybe at a lower\n"
      "                    precision (f32 data through tc16); 0 (default):\n"
      "                    the precision's usual accuracy; -v names the\n"
      "                    algorithm chosen, `fftctl info` the bounds\n"
      "  --input i8        IN holds int8 samples (radio voltages): real\n"
      "                    int8 for r2c, complex int8 for c2c as int8\n"
      "                    with a trailing axis of 2 (re, im); forward\n"
      "                    only; the daemon converts them exactly to\n"
      "                    --precision (f32 default, or f64), the output's\n"
      "                    precision (on a GPU, after the int8 crossed)\n"
      "  --device D        run on device D (default: any)\n"
      "  --raw             IN is raw: give --shape, --precision, --complex\n"
      "  --shape AxBx..    logical shape of a raw IN, up to 4 axes (no axis\n"
      "                    for re, im)\n"
      "  --precision P     f64, f32 or f16, for a raw IN\n"
      "  --complex         a raw IN holds complex elements\n"
      "  -v, --verbose     say what was done\n"
      "\n"
      "example: numpy.fft.rfft(a) of a (8, 1024) float64 array in a.npy:\n"
      "  fftctl fft --kind r2c a.npy A.npy    # A.npy: (8, 513) complex128\n";

// fft_opts holds the options of fftctl fft.
typedef struct fft_opts {
	fftd_kind   kind;
	bool        inverse;
	fftd_norm   norm;
	int         rank;
	long long   n_last; // c2r --n, 0: default
	const char *algorithm;
	double      tolerance;
	int         device;
	bool        raw;
	bool        have_shape, have_prec;
	bool        complex;
	bool        i8; // --input i8
	bool        verbose;
} fft_opts;

// run_batches executes the transform of desc (batch = total) in chunks
// the daemon accepts: at most max_batch transforms and max_request_bytes
// per side in one request. Two plans at most: full chunks, remainder.
static int
run_batches(fftd_client *client, fftd_plan_desc *desc, int64_t total,
    size_t in_per, size_t out_per, const void *in, void *out, const char **algo)
{
	fftd_info info;
	int64_t   chunk = total;
	if (fftd_client_info(client, &info) == FFTD_OK) {
		if (info.max_batch > 0 && (uint64_t) chunk > info.max_batch) {
			chunk = (int64_t) info.max_batch;
		}
		size_t per = in_per > out_per ? in_per : out_per;
		if (info.max_request_bytes > 0 && per > 0
		    && (uint64_t) chunk > info.max_request_bytes / per) {
			chunk = (int64_t) (info.max_request_bytes / per);
		}
		if (chunk < 1) {
			chunk = 1; // let the daemon refuse it, with its words
		}
	}
	fftd_plan *plan    = NULL;
	int64_t    planned = 0;
	int        rv      = FFTD_OK;
	for (int64_t done = 0; done < total;) {
		int64_t b = total - done < chunk ? total - done : chunk;
		if (b != planned) {
			fftd_plan_destroy(plan);
			plan        = NULL;
			desc->batch = b;
			rv          = fftd_plan_create(client, desc, &plan);
			if (rv != FFTD_OK) {
				return fftd__ctl_fail("plan", rv);
			}
			planned = b;
			*algo   = fftd_plan_algorithm(plan);
			// Our buffers are sized by the same rule as the
			// library's; a mismatch would be a bug, not bad input.
			size_t ib = in_per * (size_t) b;
			size_t ob = out_per * (size_t) b;
			if (fftd_plan_input_bytes(plan) != ib
			    || fftd_plan_output_bytes(plan) != ob) {
				fprintf(stderr,
				    "fftctl fft: internal error: plan expects "
				    "%zu/%zu bytes, have %zu/%zu\n",
				    fftd_plan_input_bytes(plan),
				    fftd_plan_output_bytes(plan), ib, ob);
				fftd_plan_destroy(plan);
				return EXIT_ERROR;
			}
		}
		rv = fftd_execute(plan,
		    (const unsigned char *) in + in_per * (size_t) done,
		    (unsigned char *) out + out_per * (size_t) done);
		if (rv != FFTD_OK) {
			fftd_plan_destroy(plan);
			return fftd__ctl_fail("execute", rv);
		}
		done += b;
	}
	// The plan name lives as long as the plan: keep a copy.
	static char name[32];
	snprintf(name, sizeof(name), "%s", plan != NULL ? *algo : "-");
	*algo = name;
	fftd_plan_destroy(plan);
	return EXIT_OK;
}

// fft_transform checks the input against the options, sizes the output,
// runs the transform through the daemon and writes OUT.
static int
fft_transform(
    const char *in_path, const char *out_path, const fft_opts *o, array *in)
{
	static const char *const kind_name[] = { "c2c", "r2c", "c2r" };
	const char              *kn          = kind_name[o->kind];

	if (o->kind == FFTD_R2C && in->complex) {
		return fftd__ctl_usage_error(
		    "fft", "r2c takes real input; %s is complex", in_path);
	}
	if (o->kind == FFTD_C2R && !in->complex) {
		return fftd__ctl_usage_error(
		    "fft", "c2r takes complex input; %s is real", in_path);
	}
	if (in->i8 && (o->kind == FFTD_C2R || o->inverse)) {
		return fftd__ctl_usage_error("fft",
		    "--input i8 is for forward c2c and r2c (int8 samples in, "
		    "a spectrum out)");
	}
	if (o->kind == FFTD_C2C && !in->complex && !fftd__ctl_promote(in)) {
		fprintf(stderr, "fftctl fft: out of memory\n");
		return EXIT_ERROR;
	}
	if (in->ndim < o->rank) {
		return fftd__ctl_usage_error("fft",
		    "%s has %d axes, fewer than --rank %d", in_path, in->ndim,
		    o->rank);
	}
	if (in->nelems == 0) {
		return fftd__ctl_usage_error("fft", "%s is empty", in_path);
	}

	// Transform axes are the last R; the leading ones multiply into
	// the batch.
	int     lead = in->ndim - o->rank;
	int64_t n[FFTD_MAX_RANK];
	int64_t batch = 1;
	for (int k = 0; k < lead; k++) {
		batch *= in->shape[k]; // bounded by nelems: no overflow
	}
	for (int k = 0; k < o->rank; k++) {
		n[k] = in->shape[lead + k];
	}
	array out = { .prec = in->prec,
		.complex    = o->kind != FFTD_C2R,
		.ndim       = in->ndim };
	memcpy(out.shape, in->shape, sizeof(out.shape));
	int64_t *last = &n[o->rank - 1];
	if (o->kind == FFTD_R2C) {
		out.shape[in->ndim - 1] = *last / 2 + 1;
	} else if (o->kind == FFTD_C2R) {
		int64_t m  = *last;
		int64_t nl = o->n_last ? o->n_last : 2 * (m - 1);
		if (nl < 1 || nl / 2 + 1 != m) {
			return fftd__ctl_usage_error("fft",
			    "c2r: the last axis has %" PRId64 " elements; "
			    "give --n LAST with LAST/2+1 = %" PRId64,
			    m, m);
		}
		*last                   = nl;
		out.shape[in->ndim - 1] = nl;
	}
	if (!fftd__ctl_count_elems(&out)) {
		fprintf(stderr, "fftctl fft: output size overflows\n");
		return EXIT_ERROR;
	}
	size_t per_in
	    = in->nelems / (size_t) batch * fftd__ctl_array_elem_size(in);
	size_t per_out = out.nelems / (size_t) batch
	    * fftd__ctl_elem_size(out.prec, out.complex);
	out.data
	    = malloc(out.nelems * fftd__ctl_elem_size(out.prec, out.complex));
	if (out.data == NULL) {
		fprintf(stderr, "fftctl fft: out of memory\n");
		return EXIT_ERROR;
	}

	fftd_plan_desc desc;
	fftd_plan_desc_init(&desc, o->rank, n, o->kind, in->prec);
	if (o->kind == FFTD_C2C && o->inverse) {
		desc.direction = FFTD_INVERSE;
	}
	desc.norm      = o->norm;
	desc.algorithm = o->algorithm;
	desc.tolerance = o->tolerance;
	desc.device    = o->device;
	desc.input     = in->i8 ? FFTD_INPUT_I8 : FFTD_INPUT_NATIVE;

	fftd_client *client;
	int          ec   = fftd__ctl_connect(&client);
	const char  *algo = "-";
	if (ec == EXIT_OK) {
		ec = run_batches(client, &desc, batch, per_in, per_out,
		    in->data, out.data, &algo);
		fftd_client_close(client);
	}
	if (ec == EXIT_OK) {
		ec = fftd__ctl_save_output(out_path, &out, o->verbose);
	}
	if (ec == EXIT_OK && o->verbose) {
		fprintf(stderr, "fftctl fft: %s %s %s%s, batch %" PRId64 " of",
		    kn,
		    o->kind == FFTD_C2C ? (o->inverse ? "inverse" : "forward")
		        : o->kind == FFTD_R2C ? "forward"
		                              : "inverse",
		    fftd__ctl_prec_name[in->prec], in->i8 ? " from int8" : "",
		    batch);
		for (int k = 0; k < o->rank; k++) {
			fprintf(stderr, "%s%" PRId64, k ? "x" : " ", n[k]);
		}
		fprintf(stderr, " by %s -> %s\n", algo, out_path);
	}
	free(out.data);
	return ec;
}

// fftd__ctl_fft is fftctl fft: parse the options, read IN, transform,
// write OUT.
int
fftd__ctl_fft(int argc, char **argv)
{
	enum {
		O_KIND = 256,
		O_INVERSE,
		O_NORM,
		O_RANK,
		O_N,
		O_ALGORITHM,
		O_DEVICE,
		O_RAW,
		O_SHAPE,
		O_PRECISION,
		O_COMPLEX,
		O_TOLERANCE,
		O_INPUT
	};
	static const struct option longopts[] = {
		{ "kind", required_argument, NULL, O_KIND },
		{ "inverse", no_argument, NULL, O_INVERSE },
		{ "norm", required_argument, NULL, O_NORM },
		{ "rank", required_argument, NULL, O_RANK },
		{ "axes-rank", required_argument, NULL, O_RANK },
		{ "n", required_argument, NULL, O_N },
		{ "algorithm", required_argument, NULL, O_ALGORITHM },
		{ "device", required_argument, NULL, O_DEVICE },
		{ "tolerance", required_argument, NULL, O_TOLERANCE },
		{ "input", required_argument, NULL, O_INPUT },
		{ "raw", no_argument, NULL, O_RAW },
		{ "shape", required_argument, NULL, O_SHAPE },
		{ "precision", required_argument, NULL, O_PRECISION },
		{ "complex", no_argument, NULL, O_COMPLEX },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	fft_opts  o  = { .kind = FFTD_C2C,
		  .norm        = FFTD_NORM_NONE,
		  .rank        = 1,
		  .device      = -1 };
	array     in = { 0 };
	long long v;
	int       c;
	while ((c = getopt_long(argc, argv, "vh", longopts, NULL)) != -1) {
		switch (c) {
		case O_KIND:
			if (strcmp(optarg, "c2c") == 0) {
				o.kind = FFTD_C2C;
			} else if (strcmp(optarg, "r2c") == 0) {
				o.kind = FFTD_R2C;
			} else if (strcmp(optarg, "c2r") == 0) {
				o.kind = FFTD_C2R;
			} else {
				return fftd__ctl_usage_error("fft",
				    "--kind: c2c, r2c or c2r, not '%s'",
				    optarg);
			}
			break;
		case O_INVERSE:
			o.inverse = true;
			break;
		case O_NORM:
			if (strcmp(optarg, "none") == 0) {
				o.norm = FFTD_NORM_NONE;
			} else if (strcmp(optarg, "by-n") == 0) {
				o.norm = FFTD_NORM_BY_N;
			} else if (strcmp(optarg, "ortho") == 0) {
				o.norm = FFTD_NORM_ORTHO;
			} else {
				return fftd__ctl_usage_error("fft",
				    "--norm: none, by-n or ortho, not '%s'",
				    optarg);
			}
			break;
		case O_RANK:
			if (!fftd__ctl_parse_ll(optarg, 1, FFTD_MAX_RANK, &v)) {
				return fftd__ctl_usage_error("fft",
				    "--rank: 1..%d, not '%s'", FFTD_MAX_RANK,
				    optarg);
			}
			o.rank = (int) v;
			break;
		case O_N:
			if (!fftd__ctl_parse_ll(optarg, 1, INT64_MAX, &v)) {
				return fftd__ctl_usage_error("fft",
				    "--n: a positive length, not '%s'", optarg);
			}
			o.n_last = v;
			break;
		case O_ALGORITHM:
			o.algorithm = optarg;
			break;
		case O_TOLERANCE: {
			char  *end = NULL;
			double t   = strtod(optarg, &end);
			if (end == optarg || *end != '\0' || !(t >= 0)
			    || isinf(t)) {
				return fftd__ctl_usage_error("fft",
				    "--tolerance: a relative error >= 0 (e.g. "
				    "1e-3), not '%s'",
				    optarg);
			}
			o.tolerance = t;
			break;
		}
		case O_DEVICE:
			if (!fftd__ctl_parse_ll(optarg, -1, INT_MAX, &v)) {
				return fftd__ctl_usage_error("fft",
				    "--device: an index (-1: any), not '%s'",
				    optarg);
			}
			o.device = (int) v;
			break;
		case O_INPUT:
			if (strcmp(optarg, "i8") == 0) {
				o.i8 = true;
			} else if (strcmp(optarg, "native") == 0) {
				o.i8 = false;
			} else {
				return fftd__ctl_usage_error("fft",
				    "--input: i8 or native, not '%s'", optarg);
			}
			break;
		case O_RAW:
			o.raw = true;
			break;
		case O_SHAPE:
			if (!fftd__ctl_parse_shape(optarg, &in)) {
				return fftd__ctl_usage_error("fft",
				    "--shape: 1 to %d positive sizes as "
				    "AxBx.., not '%s'",
				    FFTD__NPY_MAX_NDIM, optarg);
			}
			o.have_shape = true;
			break;
		case O_PRECISION:
			if (strcmp(optarg, "f64") == 0) {
				in.prec = FFTD_F64;
			} else if (strcmp(optarg, "f32") == 0) {
				in.prec = FFTD_F32;
			} else if (strcmp(optarg, "f16") == 0) {
				in.prec = FFTD_F16;
			} else {
				return fftd__ctl_usage_error("fft",
				    "--precision: f64, f32 or f16, not '%s'",
				    optarg);
			}
			o.have_prec = true;
			break;
		case O_COMPLEX:
			o.complex = true;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			fputs(fftd__ctl_fft_help, stdout);
			return EXIT_OK;
		default:
			return fftd__ctl_usage_error("fft", "bad option");
		}
	}
	if (argc - optind != 2) {
		return fftd__ctl_usage_error("fft", "give IN and OUT");
	}
	const char *in_path = argv[optind], *out_path = argv[optind + 1];
	if (o.inverse && o.kind != FFTD_C2C) {
		return fftd__ctl_usage_error("fft",
		    "--inverse is for c2c (r2c is forward, c2r inverse)");
	}
	if (o.n_last != 0 && o.kind != FFTD_C2R) {
		return fftd__ctl_usage_error("fft", "--n is for c2r");
	}
	// --precision is also an int8 input's plan precision.
	if (o.raw != (o.have_shape && o.have_prec)
	    && !(o.i8 && !o.raw && !o.have_shape)) {
		return fftd__ctl_usage_error("fft",
		    o.raw ? "--raw needs --shape and --precision"
		          : "--shape, --precision and --complex describe a "
		            "--raw input (--precision also an int8 one)");
	}
	if (!o.raw && o.complex) {
		return fftd__ctl_usage_error(
		    "fft", "--complex describes a --raw input");
	}
	if (o.i8 && !o.have_prec) {
		in.prec = FFTD_F32;
	}

	int ec;
	if (o.raw) {
		in.complex = o.complex;
		in.i8      = o.i8;
		ec         = fftd__ctl_load_raw(in_path, &in);
	} else {
		ec = fftd__ctl_load_npy(in_path, o.kind, &in);
	}
	if (ec == EXIT_OK && in.i8 != o.i8) {
		ec = fftd__ctl_usage_error("fft",
		    in.i8 ? "%s holds int8: give --input i8 (and --precision "
		            "f32 or f64 for the output)"
		          : "--input i8: %s does not hold int8 (|i1)",
		    in_path);
	}
	if (ec == EXIT_OK) {
		ec = fft_transform(in_path, out_path, &o, &in);
	}
	free(in.data);
	return ec;
}
