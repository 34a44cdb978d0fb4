// SPDX-License-Identifier: MIT
//
// abi.c — libfftd's binary interface: the library version
// (fftd_version), and the copies between the caller's structs and the
// library's own, sized by the caller's sizeof (fftd.h, "Binary
// compatibility"), so that a struct can grow without breaking programs
// compiled against an older fftd.h: the library reads and writes only the
// bytes the caller's struct has, and takes defaults for what it lacks.

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "client_impl.h"

// fftd_version: "MAJOR.MINOR.PATCH" of this library.
const char *
fftd_version(void)
{
	static char v[32];
	snprintf(v, sizeof(v), "%d.%d.%d", FFTD_VERSION_MAJOR,
	    FFTD_VERSION_MINOR, FFTD_VERSION_PATCH);
	return v;
}

// fftd__abi_size_ok: a caller's sizeof is never 0, is a whole number of
// 4-byte words (every struct of fftd.h holds an int or wider, so its size
// is a multiple of its alignment), and is far below 64 KiB: anything else
// is a caller's bug (a count passed for a size), not a struct version.
bool
fftd__abi_size_ok(size_t size)
{
	return size != 0 && size % 4 == 0 && size <= FFTD__ABI_MAX_SIZE;
}

// fftd__abi_in copies the caller's fields over the library's defaults.
void
fftd__abi_in(void *dst, size_t lsize, const void *src, size_t csize)
{
	memcpy(dst, src, csize < lsize ? csize : lsize);
}

// fftd__abi_out fills the caller's struct from the library's: its first
// min(csize, lsize) bytes, then zeros for the fields the library lacks.
void
fftd__abi_out(void *dst, size_t csize, const void *src, size_t lsize)
{
	size_t n = csize < lsize ? csize : lsize;
	memcpy(dst, src, n);
	if (csize > n) {
		memset((char *) dst + n, 0, csize - n);
	}
}

// fftd__abi_info_out copies *info into a caller's fftd_info of size bytes
// whose devices[] entries are device_size bytes each. The fields before
// devices sit where they sit in every version; each device entry is copied
// as a struct of its own; the fields after devices start device_size *
// FFTD_MAX_DEVICES bytes later in the caller's struct than devices do, and
// keep their relative layout (devices start 8-aligned and FFTD_MAX_DEVICES
// entries of whole words end 8-aligned, so the tail's alignment is the
// same in both).
void
fftd__abi_info_out(
    void *dst, size_t size, size_t device_size, const fftd_info *info)
{
	const size_t head  = offsetof(fftd_info, devices);
	const size_t ltail = head + sizeof(info->devices);
	const size_t ctail = head + device_size * FFTD_MAX_DEVICES;
	char        *d     = dst;
	fftd__abi_out(d, size < head ? size : head, info, head);
	for (int i = 0; i < FFTD_MAX_DEVICES; i++) {
		size_t at = head + (size_t) i * device_size;
		if (at >= size) {
			return;
		}
		size_t room = size - at < device_size ? size - at : device_size;
		fftd__abi_out(
		    d + at, room, &info->devices[i], sizeof(fftd_device_info));
	}
	if (size > ctail) {
		fftd__abi_out(d + ctail, size - ctail,
		    (const char *) info + ltail, sizeof(*info) - ltail);
	}
}
