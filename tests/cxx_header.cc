// SPDX-License-Identifier: MIT
//
// cxx_header.cc — fftd.h is usable from C++17: it compiles with -Wall
// -Wextra -Werror, its declarations have C linkage (this links against the
// C library), and the calls that need no daemon behave.

#include "fftd.h"

#include <cstdio>
#include <cstring>
#include <type_traits>

static_assert(FFTD_OK == 0, "FFTD_OK is 0");
static_assert(FFTD_MAX_RANK == 3, "rank 1..3");
static_assert(std::is_standard_layout<fftd_plan_desc>::value, "C struct");
static_assert(std::is_trivially_copyable<fftd_stats>::value, "C struct");

static int failures = 0;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			std::fprintf(stderr, "cxx_header: %s:%d: %s\n",        \
			    __FILE__, __LINE__, #cond);                        \
			failures++;                                            \
		}                                                              \
	} while (0)

static void
on_done(fftd_request *req, int status, void *data)
{
	(void) req;
	*static_cast<int *>(data) = status;
}

int
main()
{
	fftd_plan_desc d;
	const int64_t  n[3] = { 8, 4, 6 };
	CHECK(fftd_plan_desc_init(&d, 3, n, FFTD_R2C, FFTD_F32) == FFTD_OK);
	CHECK(d.rank == 3 && d.n[0] == 8 && d.n[1] == 4 && d.n[2] == 6);
	CHECK(d.batch == 1 && d.kind == FFTD_R2C && d.precision == FFTD_F32);
	CHECK(d.direction == FFTD_FORWARD && d.norm == FFTD_NORM_NONE);
	CHECK(d.istride == 0 && d.ostride == 0 && d.idist == 0 && d.odist == 0);
	CHECK(d.inembed[0] == 0 && d.onembed[2] == 0);
	CHECK(d.algorithm == nullptr || std::strcmp(d.algorithm, "auto") == 0);
	CHECK(d.device == -1);
	CHECK(fftd_plan_desc_init(&d, 1, n, FFTD_C2R, FFTD_F64) == FFTD_OK);
	CHECK(d.direction == FFTD_INVERSE);
	CHECK(fftd_plan_desc_init(&d, 0, n, FFTD_C2C, FFTD_F64) == FFTD_EINVAL);
	CHECK(fftd_plan_desc_init(&d, 4, n, FFTD_C2C, FFTD_F64) == FFTD_EINVAL);

	CHECK(std::strcmp(fftd_strerror(FFTD_OK), "success") == 0);
	CHECK(std::strcmp(fftd_strerror(FFTD_EINVAL), "invalid argument") == 0);
	CHECK(std::strcmp(fftd_err_name(FFTD_ENOPLAN), "FFTD_ENOPLAN") == 0);
	CHECK(std::strcmp(fftd_err_name(FFTD_ECUDAERR + 2), "FFTD_ECUDAERR")
	    == 0);
	CHECK(fftd_strerror(FFTD_ESYSERR + 2) != nullptr);
	CHECK(fftd_strerror(12345) != nullptr);
	CHECK(fftd_strerror(-1) != nullptr);
	CHECK(fftd_version() != nullptr && fftd_version()[0] != '\0');
	CHECK(fftd_last_error() != nullptr);

	// The types are usable as ordinary C++ values.
	fftd_stats st {};
	fftd_info  info {};
	CHECK(st.requests == 0 && info.ndevices == 0);
	fftd_client  *client = nullptr;
	fftd_plan    *plan   = nullptr;
	fftd_callback cb     = on_done;
	int           got    = -1;
	cb(nullptr, FFTD_OK, &got);
	CHECK(got == FFTD_OK);
	fftd_plan_destroy(plan); // NULL is ignored
	(void) client;
	char url[256];
	CHECK(fftd_default_url(url, sizeof(url)) == FFTD_OK);
	CHECK(fftd_default_url(url, 4) == FFTD_ELIMIT);

	if (failures == 0) {
		std::printf("cxx_header: ok\n");
	}
	return failures ? 1 : 0;
}
