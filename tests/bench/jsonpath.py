#!/usr/bin/env python3
"""JSON path names through a kvfs mount: the time of cat, >, >> and rm on
a document of 10,000 items (534 KB), for definite paths and for paths of
several matches (wildcards, .., slices, filters).

    python3 tests/bench/jsonpath.py MNT/__namespace [ITEMS]

It creates the JSON key `jsonpath-bench` in that directory, prints one
line per operation (milliseconds, the median of its runs) and removes the
key. `make bench` runs it (tests/bench/run.sh section 14).
"""
import json
import os
import statistics
import sys
import time

ns = sys.argv[1]
items = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
key = os.path.join(ns, "jsonpath-bench")
doc = {"items": [{"n": "item%d" % i, "p": i % 97, "done": i % 3 == 0, "tags": ["a", "b"]}
                 for i in range(items)]}
open(key, "w").close()
os.setxattr(key, "user.kvfs.type", b"json")
with open(key, "w") as f:
    f.write(json.dumps(doc))
print("document: %d items, %d bytes" % (items, os.stat(key).st_size))


def timed(fn, runs):
    t = []
    for _ in range(runs):
        s = time.perf_counter()
        fn()
        t.append((time.perf_counter() - s) * 1000)
    return statistics.median(t)


def cat(path):
    with open(key + path, "rb") as f:
        return f.read()


def write(path, data, mode):
    with open(key + path, mode) as f:
        f.write(data)


for path in ["", ":$.items[5000].n", ":$..n", ":$.items[*].p", ":$.items[?(@.p < 10)].n",
             ":$.items[100:200:3]", ":$..*"]:
    size = len(cat(path))
    ms = timed(lambda: cat(path), 5)
    print("%-40s %8.1f ms %10d bytes" % ("cat KEY" + path, ms, size))
for label, path, data, mode in [("echo 1 > KEY:$.items[0].p", ":$.items[0].p", "1\n", "w"),
                                ("echo 0 > KEY:$..p", ":$..p", "0\n", "w"),
                                ("echo 1 >> KEY:$..p", ":$..p", "1\n", "a")]:
    print("%-40s %8.1f ms" % (label, timed(lambda: write(path, data, mode), 5)))
s = time.perf_counter()
os.unlink(key + ":$.items[?(@.done==true)]")
print("%-40s %8.1f ms (%d left)" % ("rm KEY:$.items[?(@.done==true)]",
                                     (time.perf_counter() - s) * 1000,
                                     len(json.loads(cat(""))["items"])))
os.unlink(key)
