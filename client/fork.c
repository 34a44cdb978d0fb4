// SPDX-License-Identifier: MIT
//
// fork.c — libfftd in a process forked from one that used it. NNG 1.5.2
// panics ("nng is not fork-reentrant safe") on any call in a child forked
// after NNG started, and libfftd's I/O threads (NNG's) do not survive fork,
// so a request made there could only abort or hang. Instead: libfftd
// notes the fork (pthread_atfork, registered before its first NNG call),
// refuses in the child every call that would need NNG or the parent's
// connection with FFTD_EUNSUPPORTED, and on destroy and close makes no
// daemon call: a plan's or an array's handle (plain memory, the child's
// own copy) is freed; clients, buffers and streams are left as they are
// (their NNG sockets cannot be closed here, and their locks may have been
// held by a thread that did not survive the fork), a bounded leak of the
// child. A process that forks before its first fftd_client_open is not
// affected: its children may use libfftd.
//
// Threads: any; the flag is atomic and the handler runs once per fork.

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "client_impl.h"

static atomic_bool    g_forked;
static pthread_once_t g_watch = PTHREAD_ONCE_INIT;

// on_fork_child runs in the child of every fork after fftd__fork_watch.
static void
on_fork_child(void)
{
	atomic_store(&g_forked, true);
}

static void
watch_once(void)
{
	(void) pthread_atfork(NULL, NULL, on_fork_child);
}

// fftd__fork_watch: see client_impl.h.
void
fftd__fork_watch(void)
{
	pthread_once(&g_watch, watch_once);
}

// fftd__forked: see client_impl.h.
bool
fftd__forked(void)
{
	return atomic_load(&g_forked);
}

// fftd__fork_refuse: see client_impl.h.
int
fftd__fork_refuse(void)
{
	return fftd__set_error(FFTD_EUNSUPPORTED,
	    "libfftd cannot run in a process forked from one that had used it "
	    "(NNG is not fork-safe, and the connections are the parent's): "
	    "use fftd in the parent, or in a process that execs or is started "
	    "fresh (Python multiprocessing's 'spawn' or 'forkserver')");
}
