// SPDX-License-Identifier: MIT
//
// fuzz-chan.c — libFuzzer target for the stream channel's packets
// (daemon/chan.c, fftd__chan_submit_parse, which the server's chan_packet
// calls on every packet a client sends on its channel). The input is a
// stream of depth 1 .. 2^32-1 (its first 4 bytes) and then packets, each
// a length byte and that many bytes, as SOCK_SEQPACKET delivers them (a
// stream channel's packets; a bank channel's, which the server's
// chan_packet hands to mf_req.c, are frames parsed by fftd__frame_parse,
// fuzzed in fuzz-request.c).
// Every packet must get exactly the documented answer: EPROTO for any
// size but a submission's, EINVAL for a slot outside the stream or flags
// set, OK otherwise, with the submission's fields as sent and a message
// that fits its buffer.

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chan.h"
#include "fftd.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 4) {
		return 0;
	}
	uint32_t depth;
	memcpy(&depth, data, 4);
	data += 4;
	size -= 4;
	while (size > 0) {
		size_t len = data[0] % (sizeof(fftd__chan_submit) + 2);
		data++;
		size--;
		if (len > size) {
			len = size;
		}
		// The poller's receive buffer holds at most one byte more
		// than a submission; a heap copy of exactly the packet.
		uint8_t *pkt = malloc(len ? len : 1);
		if (pkt == NULL) {
			abort();
		}
		memcpy(pkt, data, len);
		fftd__chan_submit sub;
		char              why[160] = "";
		int               rv       = fftd__chan_submit_parse(
		                        pkt, len, depth, &sub, why, sizeof(why));
		fftd__chan_submit sent = { 0 };
		if (len == sizeof(sent)) {
			memcpy(&sent, pkt, sizeof(sent));
		}
		bool ok_size = len == sizeof(sub);
		bool ok_slot = sent.slot < depth && sent.flags == 0;
		int  want    = !ok_size ? FFTD_EPROTO
		        : !ok_slot      ? FFTD_EINVAL
		                        : FFTD_OK;
		if (rv != want || memchr(why, '\0', sizeof(why)) == NULL
		    || (rv != FFTD_EPROTO
		        && memcmp(&sub, &sent, sizeof(sub)) != 0)) {
			abort();
		}
		free(pkt);
		data += len;
		size -= len;
	}
	return 0;
}
