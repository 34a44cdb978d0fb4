#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""thread-sample.py: what a process's threads are doing, sampled from /proc,
to line up with bench/soak's slow pings (issue 14's ping tail).

  thread-sample.py record NAME OUT [SECONDS]
      Waits for the newest process named NAME (pgrep -n -x), then samples
      each of its threads' state, kernel wait channel and system call
      (/proc/PID/task/TID/{stat,wchan,syscall}) as fast as it can, for
      SECONDS (default 600) or until the process ends. OUT gets one line
      per change of a thread: CLOCK_MONOTONIC ns, tid, name, state (R, S,
      D...), wait channel, system call number and first argument (for
      futex, the futex word's address: threads waiting on the same lock
      share it).

  thread-sample.py report OUT PING_LOG [SLOW_US]
      For each ping of bench/soak --ping-log whose way to the daemon took
      over SLOW_US (default 1500), the daemon's threads that were not idle
      while it travelled (running, in uninterruptible sleep, or waiting on
      something other than their usual idle wait), with how long.

Threads in S state waiting in epoll or on their thread pool's condition
variable are idle; the most common (wait channel, system call, address)
of a thread name is taken as its idle wait. That guess is rough: a
condition variable's futex word alternates between two addresses, so
idle waits on the other one are listed as busy. For what a waiting
thread waits on, the stacks of tools/stacksample.c are the better tool.
"""
import collections
import os
import subprocess
import sys
import time


def pid_of(name):
    while True:
        r = subprocess.run(["pgrep", "-n", "-x", name], capture_output=True,
                           text=True)
        if r.stdout.strip():
            return int(r.stdout.split()[0])
        time.sleep(0.05)


def record(name, out, seconds):
    pid = pid_of(name)
    end = time.monotonic() + seconds
    fds = {}  # tid -> (comm, stat fd, wchan fd, syscall fd)
    last = {}
    next_scan = 0.0
    with open(out, "w") as f:
        f.write("# t_ns tid name state wchan syscall arg0 (pid %d)\n" % pid)
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_scan:
                next_scan = now + 0.1
                try:
                    tids = os.listdir("/proc/%d/task" % pid)
                except OSError:
                    break
                for t in tids:
                    t = int(t)
                    if t in fds:
                        continue
                    base = "/proc/%d/task/%d/" % (pid, t)
                    try:
                        fds[t] = tuple(os.open(base + x, os.O_RDONLY)
                                       for x in ("stat", "wchan", "syscall"))
                    except OSError:
                        pass
            t_ns = time.monotonic_ns()
            for t, (fs, fw, fc) in list(fds.items()):
                try:
                    st = os.pread(fs, 512, 0).decode()
                    wc = os.pread(fw, 128, 0).decode() or "0"
                    sc = os.pread(fc, 256, 0).decode().split()
                except OSError:
                    for x in fds.pop(t):
                        os.close(x)
                    continue
                if not st:
                    for x in fds.pop(t):
                        os.close(x)
                    continue
                comm = st[st.index("(") + 1:st.rindex(")")]
                state = st[st.rindex(")") + 2]
                call = sc[0] if sc else "?"
                arg0 = sc[1] if len(sc) > 3 else "-"
                key = (state, wc, call, arg0)
                if last.get(t) != key:
                    last[t] = key
                    f.write("%d %d %s %s %s %s %s\n" % (
                        t_ns, t, comm.replace(" ", "_"), state, wc, call,
                        arg0))


def report(out, ping_log, slow_us):
    # Per thread: a list of (t_ns, key); the key holds until the next one.
    tl = collections.defaultdict(list)
    names = {}
    for line in open(out):
        if line.startswith("#"):
            continue
        p = line.split()
        t, tid = int(p[0]), int(p[1])
        names[tid] = p[2]
        tl[tid].append((t, (p[3], p[4], p[5], p[6])))
    # The idle wait of each thread name: its most common sleeping key.
    common = collections.defaultdict(collections.Counter)
    for tid, ev in tl.items():
        for i, (t, k) in enumerate(ev):
            if k[0] == "S":
                nxt = ev[i + 1][0] if i + 1 < len(ev) else t
                common[names[tid]][k] += nxt - t
    idle = {n: c.most_common(1)[0][0] for n, c in common.items() if c}

    def busy_in(lo, hi):
        """Threads not idle during [lo, hi]: (name, key, ns) overlapping."""
        res = []
        for tid, ev in tl.items():
            for i, (t, k) in enumerate(ev):
                nxt = ev[i + 1][0] if i + 1 < len(ev) else t
                a, b = max(t, lo), min(nxt, hi)
                if b <= a:
                    continue
                if k[0] == "S" and (k == idle.get(names[tid])
                                    or k[1] in ("do_epoll_wait",
                                                "ep_poll")):
                    continue
                res.append((names[tid], tid, k, b - a))
        return res

    n = slow = 0
    summary = collections.Counter()
    for line in open(ping_log):
        if line.startswith("#"):
            continue
        p = line.split()
        sent, to = int(p[0]), float(p[2])
        n += 1
        if to != to or to <= slow_us:
            continue
        slow += 1
        lo, hi = sent, sent + int(to * 1e3)
        rows = busy_in(lo, hi)
        print("ping sent %.3f s: %.0f us to the daemon" % (sent / 1e9, to))
        agg = collections.defaultdict(int)
        for name, tid, k, ns in rows:
            agg[(name, k)] += ns
        for (name, k), ns in sorted(agg.items(), key=lambda x: -x[1])[:12]:
            print("   %-18s %s %-28s sys %-4s %-16s %6.0f us" % (
                name, k[0], k[1], k[2], k[3], ns / 1e3))
            summary[(name, k[0], k[1], k[2])] += 1
    print("\n%d of %d pings over %d us on the way in; idle waits: %s" % (
        slow, n, slow_us, ", ".join("%s=%s/%s" % (nm, k[1], k[2])
                                    for nm, k in sorted(idle.items()))))
    print("in how many slow pings' windows each (thread, state, wchan, "
          "syscall) was seen:")
    for k, c in summary.most_common(20):
        print("   %4d  %s" % (c, " ".join(k)))


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "record":
        record(a[1], a[2], float(a[3]) if len(a) > 3 else 600.0)
    elif len(a) >= 3 and a[0] == "report":
        report(a[1], a[2], float(a[3]) if len(a) > 3 else 1500.0)
    else:
        sys.exit(__doc__)
