// SPDX-License-Identifier: MIT
//
// pipelines_pycbc.c — bench/pipelines' case (d): PyCBC's matched_filter on
// one CPU core. Writes the size's data, PSD and first templates under a
// fresh folder in $TMPDIR (raw little-endian f32, meta.txt beside), runs
// `taskset -c 0 PYTHON bench/pycbc_mf.py --dir DIR` (posix_spawn: this
// process runs NNG, which a forked child may not use, and the child only
// execs), reads DIR/result.txt back (per-repetition times, per-template
// peaks) and removes the folder.

#include "pipelines.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

// PYCBC_REPS is how many passes over the templates the script times.
#define PYCBC_REPS "3"

// write_file writes len bytes to DIR/name; 0 or -1.
static int
write_file(const char *dir, const char *name, const void *p, size_t len)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL) {
		return -1;
	}
	size_t w = fwrite(p, 1, len, f);
	return (fclose(f) == 0 && w == len) ? 0 : -1;
}

// remove_dir removes the files this case writes and the folder.
static void
remove_dir(const char *dir)
{
	static const char *names[]
	    = { "meta.txt", "data.bin", "psd.bin", "bank.bin", "result.txt" };
	char path[512];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

// run_script spawns the script under taskset (or alone when taskset is
// missing: noted) and returns its exit status, or -1.
static int
run_script(const char *python, const char *script, const char *dir, pl_case *c)
{
	const char  *ts     = access("/usr/bin/taskset", X_OK) == 0
	         ? "/usr/bin/taskset"
	         : access("/bin/taskset", X_OK) == 0 ? "/bin/taskset"
	                                             : NULL;
	const char  *argv[] = { ts, "-c", "0", python, script, "--dir", dir,
		 "--reps", PYCBC_REPS, NULL };
	char *const *args   = (char *const *) (ts != NULL ? argv : argv + 3);
	pid_t        pid;
	int          rv = posix_spawn(&pid, args[0], NULL, NULL, args, environ);
	if (rv != 0) {
		snprintf(c->note, sizeof(c->note), "cannot run %s: %s", args[0],
		    strerror(rv));
		return -1;
	}
	if (ts == NULL) {
		snprintf(c->note, sizeof(c->note), "no taskset: not pinned; ");
	}
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			return -1;
		}
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// read_result parses DIR/result.txt into c; 0 or -1.
static int
read_result(
    const char *dir, int64_t count, pl_case *c, char *version, size_t vlen)
{
	char path[512], line[256];
	snprintf(path, sizeof(path), "%s/result.txt", dir);
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	double sec[64];
	int    reps = 0;
	c->peaks    = calloc((size_t) count, sizeof(pl_peak));
	while (c->peaks != NULL && fgets(line, sizeof(line), f) != NULL) {
		long long i, t;
		double    v;
		char      word[128];
		if (sscanf(line, "seconds %lf", &v) == 1 && reps < 64) {
			sec[reps++] = v;
		} else if (sscanf(line, "peak %lld %lf %lld", &i, &v, &t) == 3
		    && i >= 0 && i < count) {
			c->peaks[i] = (pl_peak) { v, t };
			c->npeaks   = i + 1 > c->npeaks ? i + 1 : c->npeaks;
		} else if (sscanf(line, "version %127s", word) == 1) {
			snprintf(version, vlen, "%s", word);
		}
	}
	fclose(f);
	if (reps == 0 || c->npeaks != count) {
		return -1;
	}
	c->templates = count;
	pl_case_times(c, sec, reps);
	return 0;
}

int
pl_pycbc(const char *python, const char *script, const pl_inputs *in,
    int64_t count, pl_case *c, char *version, size_t vlen)
{
	const char *tmp = getenv("TMPDIR");
	char        dir[400], meta[512];
	if (count > in->count) {
		count = in->count;
	}
	snprintf(dir, sizeof(dir), "%s/fftd-pycbc-XXXXXX",
	    tmp != NULL && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL) {
		snprintf(
		    c->note, sizeof(c->note), "mkdtemp: %s", strerror(errno));
		c->failed = 1;
		return -1;
	}
	size_t nb = (size_t) in->nbins;
	int    m  = snprintf(meta, sizeof(meta),
	        "n %lld\ndelta_f %.17g\nkmin %lld\nkmax %lld\nt_begin %lld\n"
	            "t_end %lld\nf_lower %.17g\ncount %lld\n",
	        (long long) in->n, in->delta_f, (long long) in->kmin,
	        (long long) in->kmax, (long long) in->t_begin,
	        (long long) in->t_end, PL_F_LOWER, (long long) count);
	if (write_file(dir, "meta.txt", meta, (size_t) m) != 0
	    || write_file(dir, "data.bin", in->data, 8 * nb) != 0
	    || write_file(dir, "psd.bin", in->psd, 4 * nb) != 0
	    || write_file(dir, "bank.bin", in->bank, 8 * nb * (size_t) count)
	        != 0) {
		snprintf(
		    c->note, sizeof(c->note), "writing %.200s failed", dir);
		c->failed = 1;
		remove_dir(dir);
		return -1;
	}
	fflush(stdout);
	int rv = run_script(python, script, dir, c);
	if (rv != 0 || read_result(dir, count, c, version, vlen) != 0) {
		size_t l = strlen(c->note);
		snprintf(c->note + l, sizeof(c->note) - l,
		    "%s %s failed (exit status %d)", python, script, rv);
		c->failed = 1;
		remove_dir(dir);
		return -1;
	}
	size_t l = strlen(c->note);
	snprintf(c->note + l, sizeof(c->note) - l,
	    "%lld templates, one core, PyCBC %s", (long long) count, version);
	remove_dir(dir);
	return 0;
}
