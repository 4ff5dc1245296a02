#!/usr/bin/env python3
"""List a directory with getdents64 and a small buffer, as a reader that
resumes from every entry's offset would (docs/architecture.md section 7).

usage: getdents.py [-b BYTES] [-n] [--names FILE] DIR

Prints "entries N distinct D duplicates X" (without "." and ".."). -b sets
the getdents64 buffer size (default 256: a few entries per call, so the
kernel resumes from offsets in the middle of kvfs's replies). --names
writes the names, one a line, in listing order. --seek also re-reads: after
every call it seeks back to the offset of the entry before the last one
(telldir/seekdir), so each resume comes from an older offset. Exits 1 on a
duplicate unless -n (report only)."""

import ctypes
import os
import struct
import sys

SYS_GETDENTS64 = {"x86_64": 217, "aarch64": 61}.get(os.uname().machine, 217)
libc = ctypes.CDLL(None, use_errno=True)


def listing(path, size, seek=False):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    buf = ctypes.create_string_buffer(size)
    names = []
    try:
        while True:
            n = libc.syscall(SYS_GETDENTS64, fd, buf, size)
            if n < 0:
                e = ctypes.get_errno()
                raise OSError(e, os.strerror(e), path)
            if n == 0:
                return names
            raw = buf.raw[:n]
            p = 0
            got = []
            while p < n:
                _ino, off, reclen, _typ = struct.unpack_from("<QqHB", raw, p)
                name = raw[p + 19 : p + reclen].split(b"\0", 1)[0]
                got.append((name, off))
                p += reclen
            if seek and len(got) >= 2:
                # keep all but the last entry, then resume after the one
                # before it: the last one comes again from an older offset
                got = got[:-1]
                os.lseek(fd, got[-1][1], os.SEEK_SET)
            names.extend(nm for nm, _ in got if nm not in (b".", b".."))
    finally:
        os.close(fd)


def main(argv):
    size, report_only, out, seek = 256, False, None, False
    args = list(argv)
    while args and args[0].startswith("-"):
        a = args.pop(0)
        if a == "-b":
            size = int(args.pop(0))
        elif a == "-n":
            report_only = True
        elif a == "--names":
            out = args.pop(0)
        elif a == "--seek":
            seek = True
        else:
            sys.exit(__doc__)
    if len(args) != 1:
        sys.exit(__doc__)
    names = listing(args[0], size, seek)
    distinct = len(set(names))
    print("entries %d distinct %d duplicates %d" % (len(names), distinct, len(names) - distinct))
    if out:
        with open(out, "wb") as f:
            f.writelines(nm + b"\n" for nm in names)
    return 0 if report_only or distinct == len(names) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
