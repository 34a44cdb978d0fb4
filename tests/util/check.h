// SPDX-License-Identifier: MIT
//
// check.h — PRIVATE to fftd's tests. Assertions on libfftd calls, for
// cmocka tests (include after <cmocka.h> and fftd.h).

#ifndef FFTD_TESTS_CHECK_H
#define FFTD_TESTS_CHECK_H

// ASSERT_OK fails the test unless a libfftd call returns FFTD_OK, with the
// code's name and the library's message.
#define ASSERT_OK(call)                                                        \
	do {                                                                   \
		int rv_ = (call);                                              \
		if (rv_ != FFTD_OK) {                                          \
			fail_msg("%s: %s (%s)", #call, fftd_err_name(rv_),     \
			    fftd_last_error());                                \
		}                                                              \
	} while (0)

#endif // FFTD_TESTS_CHECK_H
