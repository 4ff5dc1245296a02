#!/usr/bin/env python3
"""tests/bench/follow.py WRITER_NS FOLLOWER_NS N [PAUSE_MS]: follower lag.

WRITER_NS is a namespace directory of a read-write kvfs mount, FOLLOWER_NS
the same namespace of a `-o follow=MS` mount of the same database. N times:
write a new value to the key `lag` through the writer (open, write, close:
committed when close returns), then read `lag` through the follower every
millisecond until it holds that value. The lag is the time from the
writer's close to the first read that shows the value. Before each write
it waits a random time of up to PAUSE_MS (default 100, at least the
follower's period): the poll ends right after a catch-up, and a write
that came at once would always wait a whole period for the next one.
Prints one line, "follow_lag MEDIAN P99 MAX ms N", and removes the key.
"""
import os
import random
import sys
import time


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    wdir, fdir, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pause = float(sys.argv[4]) if len(sys.argv) == 5 else 100.0
    rnd = random.Random(18)
    wpath, fpath = os.path.join(wdir, "lag"), os.path.join(fdir, "lag")
    lags = []
    for i in range(n):
        want = b"v%d" % i
        time.sleep(rnd.uniform(0, pause) / 1000)
        with open(wpath, "wb") as f:
            f.write(want)
        t0 = time.perf_counter()
        deadline = t0 + 30
        while True:
            try:
                with open(fpath, "rb") as f:
                    if f.read() == want:
                        break
            except FileNotFoundError:
                pass
            if time.perf_counter() > deadline:
                sys.exit("follow.py: write %d not seen in the follower after 30 s" % i)
            time.sleep(0.001)
        lags.append((time.perf_counter() - t0) * 1000)
    os.unlink(wpath)
    lags.sort()
    med = lags[len(lags) // 2] if n % 2 else (lags[n // 2 - 1] + lags[n // 2]) / 2
    p99 = lags[min(n - 1, -(-99 * n // 100) - 1)]
    print("follow_lag %.1f %.1f %.1f ms %d" % (med, p99, lags[-1], n))


if __name__ == "__main__":
    main()
