#!/usr/bin/env python3
"""Contention driver for kvfs: many real processes race on one directory.

Usage:
  contend.py run SCENARIO NSDIR STATEDIR [SECONDS]
  contend.py check SCENARIO NSDIR STATEDIR
  contend.py ldb-hash METASCAN DEFAULTSCAN KEY [NS]
  contend.py list

NSDIR is a namespace directory of a mounted kvfs (e.g. MNT/__namespace),
best a fresh one: names already there are left alone, any other name that
shows up is a stray. STATEDIR (outside the mount) receives the workers'
logs and model.json, the exact model of what was acknowledged; `check`
reads it again, e.g. after a remount. SECONDS defaults to 8
(KVFS_CONTENTION_SECONDS).

Every worker is a forked process doing plain system calls (os.open,
os.write, os.close, os.rename, os.unlink, os.listdir, os.stat, os.read),
one write() per line. A line is 21 bytes, `WID SEQSEQS CRC32HEX\\n`
(e.g. `a03 0000123 1a2b3c4d\\n`), unique and self-checking, so a torn,
corrupt or foreign line is recognised anywhere. A line is acknowledged when
its write() returned the full length and its close() returned 0.

Scenarios (each is one item of issue 14):
  rename-append  appenders on h/s and h/t (O_WRONLY|O_APPEND|O_CREAT, one
                 line, close) while a renamer swaps s and t through x, plus
                 a lister. The renamer uses renameat2(RENAME_NOREPLACE): an
                 appender's O_CREAT may make a fresh s or t while the name is
                 free; the renamer moves that file aside to yN instead of
                 replacing it, so no acknowledged line can legitimately
                 disappear. Check: every acknowledged line is in exactly one
                 field of h; names only s, t, x, yN; no NUL or
                 non-printable byte in names or values.
  append-list    4 appenders on 4 fields of one hash, 2 readers looping
                 listdir + stat + read of every field. Check: every
                 acknowledged line once, each writer's lines in order; every
                 read shows every line acknowledged before it began.
  read-torn      readers do open + one read() of 64 KiB + close of h/f while
                 appenders append to it, an overwriter rewrites it with
                 O_TRUNC (one write() of 10 lines) and a renamer renames a
                 fresh file over it. Files stay under ~3 KiB. Check: every
                 read is whole valid lines that were written, no NUL; at the
                 end, every append begun after the last replacement ended is
                 there, and the file is one replacement's lines then appends.
  create-race    creators open(O_WRONLY|O_CREAT) + close a name while a
                 renamer renames a temp file onto it and an unlinker unlinks
                 it, on a string key (NSDIR/k) and on a field (NSDIR/ch/f).
                 Check: no open fails (a create with an existing parent never
                 fails with ENOENT).
  mixed          on one hash (NSDIR/mh) and on the namespace itself (string
                 keys m*): appenders on their own names, an overwriter, a
                 renamer and an unlinker on one shared name, and a
                 lister/stater/reader. Check: appenders' files exact; the
                 shared name holds the effect of one of the operations that
                 no other operation strictly followed; every read whole; the
                 hash's st_size equals its listed field count.

Output: one line per phase, `SCENARIO PHASE: OK|FAIL key=value ...`, then
examples of each violation. Exit status 0 only if nothing was violated
(1 on a violation, 2 on a usage or setup error).
"""

import ctypes
import errno
import json
import os
import re
import stat
import sys
import time
import traceback
import zlib
from multiprocessing.sharedctypes import RawArray

LINE_LEN = 21
SET_LINES = 10  # lines per overwrite / renamed-in file
LINE_RE = re.compile(rb"([a-z][0-9]{2}) ([0-9]{7}) ([0-9a-f]{8})\n")
NAME_OK = re.compile(r"[A-Za-z0-9._-]+")
MAX_EXAMPLES = 8

_libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD = -100
RENAME_NOREPLACE = 1


def mono():
    return time.monotonic_ns()


def make_line(wid, seq):
    body = "%s %07d" % (wid, seq)
    return ("%s %08x\n" % (body, zlib.crc32(body.encode()))).encode()


def make_set(wid, seq0, n=SET_LINES):
    return b"".join(make_line(wid, seq0 + i) for i in range(n))


def parse(data):
    """(lines, problem): the (wid, seq) of each line, or why the bytes are
    not a sequence of whole valid lines."""
    if b"\0" in data:
        i = data.index(b"\0")
        return [], "NUL byte at offset %d of %d" % (i, len(data))
    if len(data) % LINE_LEN:
        return [], "length %d is not whole lines" % len(data)
    out = []
    for off in range(0, len(data), LINE_LEN):
        chunk = data[off : off + LINE_LEN]
        m = LINE_RE.fullmatch(chunk)
        if not m:
            return [], "bad line at offset %d: %r" % (off, chunk)
        body = chunk[:11]
        if zlib.crc32(body) != int(m.group(3), 16):
            return [], "bad crc at offset %d: %r" % (off, chunk)
        out.append((m.group(1).decode(), int(m.group(2))))
    return out, None


def salvage(data):
    """The valid lines found anywhere in bytes that are not whole lines."""
    out = []
    for m in LINE_RE.finditer(data):
        if zlib.crc32(m.group(0)[:11]) == int(m.group(3), 16):
            out.append((m.group(1).decode(), int(m.group(2))))
    return out


def rename_noreplace(src, dst):
    r = _libc.renameat2(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst),
                        RENAME_NOREPLACE)
    if r != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), src)


def errname(e):
    return errno.errorcode.get(e.errno, str(e.errno))


def read_all(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        parts = []
        while True:
            b = os.read(fd, 65536)
            if not b:
                break
            parts.append(b)
        return b"".join(parts)
    finally:
        os.close(fd)


def name_problem(name):
    """Why a listed name cannot be one this driver made (None if it can)."""
    if not NAME_OK.fullmatch(name):
        return "name %r has bytes no worker uses" % name
    return None


# --------------------------------------------------------------- workers


class Worker:
    """State of one forked worker; dumped to STATEDIR/log-WID.json."""

    def __init__(self, ctx, wid, role):
        self.ctx = ctx
        self.wid = wid
        self.role = role
        self.deadline = ctx["deadline"]
        self.log = {"wid": wid, "role": role, "appends": [], "replaces": [],
                    "unlinks": [], "errors": {}, "unexpected": {}, "ops": 0,
                    "reads": 0, "torn": 0, "stale": 0, "strays": 0,
                    "bad_sizes": 0, "examples": []}

    def running(self):
        return mono() < self.deadline

    def err(self, op, e, expected=False):
        k = "%s %s" % (op, errname(e))
        self.log["errors"][k] = self.log["errors"].get(k, 0) + 1
        if not expected:
            self.log["unexpected"][k] = self.log["unexpected"].get(k, 0) + 1
            self.example("%s: %s" % (k, e))

    def example(self, text):
        if len(self.log["examples"]) < MAX_EXAMPLES:
            self.log["examples"].append("%s: %s" % (self.wid, text))

    def violation(self, kind, text):
        self.log[kind] += 1
        self.example("%s: %s" % (kind, text))

    # A line to a file: open, one write, close. Returns 2 (acknowledged),
    # 1 (attempted: the write may have happened) or 0 (never written).
    def append_line(self, path, data, flags, cap=None):
        try:
            fd = os.open(path, flags, 0o644)
        except OSError as e:
            self.err("open", e)
            return 0
        wrote = False
        try:
            if cap is not None and os.fstat(fd).st_size >= cap:
                os.close(fd)
                return -1
            n = os.write(fd, data)
            wrote = n == len(data)
            if not wrote:
                self.example("short write %d of %d to %s" % (n, len(data), path))
                self.log["unexpected"]["write short"] = 1
        except OSError as e:
            self.err("write", e)
        try:
            os.close(fd)
        except OSError as e:
            self.err("close", e)
            return 1
        return 2 if wrote else 1

    def dump(self, statedir):
        tmp = os.path.join(statedir, ".log-%s.json" % self.wid)
        with open(tmp, "w") as f:
            json.dump(self.log, f)
        os.rename(tmp, os.path.join(statedir, "log-%s.json" % self.wid))


def w_appender(w, base, names, slot, flags=os.O_WRONLY | os.O_APPEND | os.O_CREAT,
               cap=None):
    """Append one line per open/close, round robin over names."""
    seq = 0
    i = 0
    acked = w.ctx["acked"]
    issued = w.ctx["issued"]
    while w.running():
        name = names[i % len(names)]
        i += 1
        data = make_line(w.wid, seq)
        issued[slot] = seq
        t0 = mono()
        st = w.append_line(os.path.join(base, name), data, flags, cap)
        t1 = mono()
        w.log["ops"] += 1
        if st < 0:  # over the size cap: nothing written
            continue
        w.log["appends"].append([name, seq, t0, t1, st])
        if st == 2:
            acked[slot] = seq
        seq += 1


def w_swapper(w, base, s, t, x, junk):
    """Swap s and t through x without ever replacing a file: a fresh s or t
    (made by an appender's O_CREAT) is moved aside to a junk name first."""
    n = 0

    def rn(a, b):
        nonlocal n
        while True:
            try:
                rename_noreplace(os.path.join(base, a), os.path.join(base, b))
                return
            except OSError as e:
                if e.errno != errno.EEXIST:
                    w.err("rename", e)
                    return
            try:
                rename_noreplace(os.path.join(base, b),
                                 os.path.join(base, "%s%d" % (junk, n)))
                n += 1
            except OSError as e:
                w.err("rename-aside", e)
                return

    while w.running():
        rn(s, x)
        rn(t, s)
        rn(x, t)
        w.log["ops"] += 3


def w_lister(w, base, allowed):
    while w.running():
        try:
            names = os.listdir(base)
        except OSError as e:
            w.err("listdir", e)
            continue
        w.log["ops"] += 1
        for n in names:
            if not allowed(n):
                w.violation("strays", "listed %r" % n)


def w_overwriter(w, base, name, slot):
    """Rewrite NAME with O_TRUNC and one write() of a fresh set of lines."""
    seq = 0
    issued = w.ctx["issued"]
    while w.running():
        data = make_set(w.wid, seq)
        issued[slot] = seq + SET_LINES - 1
        t0 = mono()
        st = w.append_line(os.path.join(base, name), data,
                           os.O_WRONLY | os.O_TRUNC | os.O_CREAT)
        t1 = mono()
        w.log["ops"] += 1
        if st:
            w.log["replaces"].append([name, w.wid, seq, t0, t1, st])
        seq += SET_LINES


def w_renamer(w, base, name, tmp, slot):
    """Write a fresh set of lines to TMP, then rename TMP onto NAME."""
    seq = 0
    issued = w.ctx["issued"]
    while w.running():
        data = make_set(w.wid, seq)
        issued[slot] = seq + SET_LINES - 1
        t0 = mono()
        st = w.append_line(os.path.join(base, tmp), data,
                           os.O_WRONLY | os.O_TRUNC | os.O_CREAT)
        w.log["ops"] += 1
        if st == 2:
            try:
                os.rename(os.path.join(base, tmp), os.path.join(base, name))
                w.log["replaces"].append([name, w.wid, seq, t0, mono(), 2])
            except OSError as e:
                w.err("rename", e)
        seq += SET_LINES


def w_unlinker(w, base, name):
    while w.running():
        t0 = mono()
        try:
            os.unlink(os.path.join(base, name))
            w.log["unlinks"].append([name, t0, mono()])
        except OSError as e:
            w.err("unlink", e, expected=e.errno == errno.ENOENT)
        w.log["ops"] += 1


def w_creator(w, base, name):
    while w.running():
        try:
            fd = os.open(os.path.join(base, name), os.O_WRONLY | os.O_CREAT, 0o644)
        except OSError as e:
            w.err("open(O_CREAT) %s" % name, e)
            w.log["ops"] += 1
            continue
        try:
            os.close(fd)
        except OSError as e:
            w.err("close", e)
        w.log["ops"] += 1


def check_read_lines(w, lines, what):
    """Lines read must have been issued (written or being written) before
    the read ended, and appear at most once."""
    issued = w.ctx["issued"]
    slots = w.ctx["slots"]
    seen = set()
    for wid, seq in lines:
        if (wid, seq) in seen:
            w.violation("torn", "%s: line %s %07d twice in one read" % (what, wid, seq))
            return False
        seen.add((wid, seq))
        s = slots.get(wid)
        if s is None or seq > issued[s]:
            w.violation("torn", "%s: line %s %07d was never written" % (what, wid, seq))
            return False
    return True


def w_single_reader(w, base, name):
    """open + one read() of 64 KiB + close: whole valid lines or torn."""
    while w.running():
        path = os.path.join(base, name)
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError as e:
            w.err("open-read", e)
            continue
        try:
            data = os.read(fd, 65536)
        except OSError as e:
            w.err("read", e)
            data = None
        try:
            os.close(fd)
        except OSError as e:
            w.err("close-read", e)
        w.log["ops"] += 1
        if data is None:
            continue
        w.log["reads"] += 1
        lines, problem = parse(data)
        if problem:
            w.violation("torn", "read of %s (%d bytes): %s" % (name, len(data), problem))
            continue
        check_read_lines(w, lines, "read of %s" % name)


def w_scanner(w, base, allowed, appended, volatile):
    """listdir + stat + read (to EOF) of every listed name.

    appended: name -> wid of the only appender of that file; such a file
    must show, contiguous from 0, every line acknowledged before the scan
    began. volatile: names that may vanish (ENOENT is no error) and hold
    one whole set of lines or nothing."""
    acked = w.ctx["acked"]
    slots = w.ctx["slots"]
    while w.running():
        before = {n: acked[slots[wid]] for n, wid in appended.items()}
        try:
            names = os.listdir(base)
        except OSError as e:
            w.err("listdir", e)
            continue
        w.log["ops"] += 1
        listed = set(names)
        for n, seq in before.items():
            if seq >= 0 and n not in listed:
                w.violation("stale", "%s not listed after line %d was acknowledged" % (n, seq))
        for n in names:
            if not allowed(n):
                w.violation("strays", "listed %r" % n)
                continue
            vol = n in volatile
            path = os.path.join(base, n)
            try:
                st = os.stat(path)
            except OSError as e:
                w.err("stat", e, expected=vol and e.errno == errno.ENOENT)
                continue
            if stat.S_ISDIR(st.st_mode):
                continue
            if st.st_size % LINE_LEN:
                w.violation("bad_sizes", "stat %s: st_size %d is not whole lines" % (n, st.st_size))
            try:
                data = read_all(path)
            except OSError as e:
                w.err("read", e, expected=vol and e.errno == errno.ENOENT)
                continue
            w.log["reads"] += 1
            lines, problem = parse(data)
            if problem:
                w.violation("torn", "read of %s (%d bytes): %s" % (n, len(data), problem))
                continue
            if not check_read_lines(w, lines, "read of %s" % n):
                continue
            if n in appended:
                wid = appended[n]
                seqs = [s for lw, s in lines if lw == wid]
                if len(seqs) != len(lines) or seqs != list(range(len(seqs))):
                    gap = next((i for i, q in enumerate(seqs) if q != i), len(seqs))
                    w.violation("stale", "read of %s: %d lines, not %s's lines 0.. in order: "
                                "line %d is %s" % (n, len(lines), wid, gap,
                                                   lines[gap] if gap < len(lines) else "-"))
                elif len(seqs) <= before.get(n, -1):
                    w.violation("stale", "read of %s: %d lines, but line %d was acknowledged before"
                                % (n, len(seqs), before[n]))
            elif n in volatile and lines:
                wid0, s0 = lines[0]
                if lines != [(wid0, s0 + i) for i in range(SET_LINES)]:
                    w.violation("torn", "read of %s: %d lines, not one whole set" % (n, len(lines)))


# ------------------------------------------------------------- scenarios
#
# A scenario: setup(nsdir, ctx) makes the initial tree and returns the list
# of workers as (wid, role, function, args); final(nsdir, model, out) checks
# the tree at rest against the merged model.


def p(nsdir, *parts):
    return os.path.join(nsdir, *parts)


def write_file(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _ra_setup(nsdir, ctx):
    os.mkdir(p(nsdir, "h"))
    names = ["s", "t"]
    init = []
    for i, n in enumerate(names):
        write_file(p(nsdir, "h", n), make_line("i00", i))
        init.append(["i00", i])
    ctx["init"] = init
    base = p(nsdir, "h")
    work = []
    k = 0
    for n in names:
        for _ in range(2):
            work.append(("a%02d" % k, "append", w_appender, (base, [n], k)))
            k += 1
    work.append(("n00", "rename", w_swapper, (base, "s", "t", "x", "y")))
    work.append(("l00", "list", w_lister, (base, _ra_allowed)))
    return work


def _ra_allowed(n):
    return n in ("s", "t", "x") or re.fullmatch(r"y[0-9]+", n) is not None


def tree_lines(base, allowed, out):
    """{(wid, seq): count} over every file of base, and {name: lines}.
    Directories are skipped; a stray name is reported, and its lines
    still count as found (so that `lost` means gone, not misnamed)."""
    found = {}
    files = {}
    try:
        names = os.listdir(base)
    except OSError as e:
        out.bad("errors", "listdir %s: %s" % (base, e))
        return found, files
    for n in names:
        path = os.path.join(base, n)
        if not allowed(n) or name_problem(n):
            out.bad("stray_names", "%r in %s" % (n, os.path.basename(base)))
        try:
            if os.path.isdir(path):
                continue
            data = read_all(path)
        except OSError as e:
            out.bad("errors", "read %r: %s" % (n, e))
            continue
        lines, problem = parse(data)
        if problem:  # reported; its valid lines still count as found
            out.bad("torn_files", "%r: %s" % (n, problem))
            lines = salvage(data)
        files[n] = lines
        for ln in lines:
            found[ln] = found.get(ln, 0) + 1
    return found, files


def account(found, model, out, appends_filter=None):
    """Every acknowledged append present exactly once, an attempted one at
    most once, nothing else (lines of replacements are checked by the
    caller and must be passed in model['other'])."""
    acked = set()
    attempted = set()
    for a in model["appends"]:
        if appends_filter and not appends_filter(a):
            continue
        key = (a["wid"], a["seq"])
        (acked if a["st"] == 2 else attempted).add(key)
    for wid, seq in model.get("init", []):
        acked.add((wid, seq))
    out.count("acknowledged", len(acked))
    other = model.get("other", set())
    for key in sorted(acked):
        c = found.get(key, 0)
        if c == 0:
            out.bad("lost", "acknowledged line %s %07d is missing" % key)
        elif c > 1:
            out.bad("duplicated", "line %s %07d is there %d times" % (key + (c,)))
    for key, c in sorted(found.items()):
        if key in acked:
            continue
        if key in attempted or key in other:
            if c > 1:
                out.bad("duplicated", "line %s %07d is there %d times" % (key + (c,)))
        else:
            out.bad("foreign", "line %s %07d was never written here" % key)


def _ra_final(nsdir, model, out):
    found, _ = tree_lines(p(nsdir, "h"), _ra_allowed, out)
    account(found, model, out)


def _al_setup(nsdir, ctx):
    os.mkdir(p(nsdir, "h"))
    base = p(nsdir, "h")
    work = []
    appended = {}
    for k in range(4):
        wid = "a%02d" % k
        appended["f%d" % k] = wid
        work.append((wid, "append", w_appender, (base, ["f%d" % k], k)))
    for r in range(2):
        work.append(("l%02d" % r, "scan", w_scanner,
                     (base, lambda n: n in appended, appended, set())))
    return work


def check_ordered(files, appended, model, out):
    """Each appender's file: its lines only, in order, none lost."""
    by_wid = {}
    for a in model["appends"]:
        by_wid.setdefault(a["wid"], []).append(a)
    for name, wid in sorted(appended.items()):
        lines = files.get(name, [])
        mine = by_wid.get(wid, [])
        if mine and name not in files:
            out.bad("lost", "%s is missing (%s acknowledged %d lines)" %
                    (name, wid, sum(1 for a in mine if a["st"] == 2)))
            continue
        # The expected sequence: acknowledged lines, attempted ones optional.
        seqs = [s for lw, s in lines if lw == wid]
        if len(seqs) != len(lines):
            out.bad("foreign", "%s holds lines of another writer" % name)
        if seqs != sorted(seqs):
            out.bad("out_of_order", "%s: %s's lines are not in order" % (name, wid))


def _al_final(nsdir, model, out):
    appended = {"f%d" % k: "a%02d" % k for k in range(4)}
    base = p(nsdir, "h")
    found, files = tree_lines(base, lambda n: n in appended, out)
    account(found, model, out)
    check_ordered(files, appended, model, out)
    hash_size(base, out)


def _rt_setup(nsdir, ctx):
    os.mkdir(p(nsdir, "h"))
    base = p(nsdir, "h")
    t = mono()
    write_file(p(base, "f"), make_set("i00", 0))
    ctx["init_replaces"] = [["f", "i00", 0, t, t, 2]]
    work = []
    for k in range(2):
        work.append(("a%02d" % k, "append", w_appender,
                     (base, ["f"], k, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 2600)))
    work.append(("o00", "overwrite", w_overwriter, (base, "f", 2)))
    work.append(("r00", "rename", w_renamer, (base, "f", "f.r", 3)))
    for r in range(3):
        work.append(("l%02d" % r, "read", w_single_reader, (base, "f")))
    return work


def check_replaced(name, lines, model, out, appends_of):
    """NAME (lines, or None if absent) at rest, written by replacements
    (overwrite, rename onto, unlink) and appends: it must hold the effect
    of a replacement that no other one strictly followed, then appends."""
    reps = [r for r in model["replaces"] if r["name"] == name and r["st"] == 2]
    unl = [u for u in model["unlinks"] if u["name"] == name]
    ops = reps + unl
    if not ops:
        return
    # candidates: operations no other operation began after the end of
    latest_start = max(o["t0"] for o in ops)
    cand = [o for o in ops if o["t1"] >= latest_start]
    if lines is None:
        if not any("wid" not in o for o in cand):
            out.bad("lost", "%s is absent, but the last operations on it were writes" % name)
        return
    if not lines:
        out.bad("lost", "%s is empty, but every replacement wrote %d lines" % (name, SET_LINES))
        return
    wid0, s0 = lines[0]
    if wid0.startswith("a"):
        out.bad("lost", "%s starts with an appended line, not a replacement's" % name)
        return
    head = [(wid0, s0 + i) for i in range(SET_LINES)]
    if lines[:SET_LINES] != head:
        out.bad("torn_files", "%s: the replacement's %d lines are not whole" % (name, SET_LINES))
        return
    rep = [r for r in reps if r["wid"] == wid0 and r["seq"] == s0]
    if not rep and any(r["wid"] == wid0 and r["seq"] == s0 for r in model["replaces"]):
        pass  # an unacknowledged replacement: allowed
    elif not rep:
        out.bad("foreign", "%s holds %s %07d.., which no replacement wrote" % (name, wid0, s0))
        return
    elif not any(r in cand for r in rep):
        out.bad("lost", "%s holds the lines of %s %07d.., an older replacement than the last"
                % (name, wid0, s0))
    tail = lines[SET_LINES:]
    if rep:  # appends finished before the replacement began were replaced
        start = min(r["t0"] for r in rep)
        early = {(a["wid"], a["seq"]) for a in appends_of if a["t1"] < start}
        for key in tail:
            if key in early:
                out.bad("foreign", "%s: line %s %07d, appended before the replacement that "
                        "holds the file began, is back" % ((name,) + key))
    if any(not w.startswith("a") for w, _ in tail):
        out.bad("torn_files", "%s: replacement lines after the first set" % name)
    if len(set(tail)) != len(tail):
        out.bad("duplicated", "%s: an appended line twice" % name)
    have = set(tail)
    last_rep_end = max(o["t1"] for o in ops)
    for a in appends_of:
        key = (a["wid"], a["seq"])
        if a["st"] == 2 and a["t0"] > last_rep_end and key not in have:
            out.bad("lost", "%s: line %s %07d, appended after the last replacement, is missing"
                    % ((name,) + key))
        out.count("acknowledged", 1 if a["st"] == 2 else 0)
    known = {(a["wid"], a["seq"]) for a in appends_of}
    for key in tail:
        if key not in known:
            out.bad("foreign", "%s: line %s %07d was never appended" % ((name,) + key))


def _rt_final(nsdir, model, out):
    base = p(nsdir, "h")
    found, files = tree_lines(base, lambda n: n in ("f", "f.r"), out)
    if "f.r" in files:
        out.bad("stray_names", "f.r is left over")
    check_replaced("f", files.get("f"), model, out, model["appends"])


def _cr_setup(nsdir, ctx):
    os.mkdir(p(nsdir, "ch"))
    work = []
    k = 0
    for base, name in ((nsdir, "k"), (p(nsdir, "ch"), "f")):
        for c in range(3):
            work.append(("c%02d" % k, "create", w_creator, (base, name)))
            k += 1
        work.append(("r%02d" % k, "rename", w_renamer, (base, name, name + ".r", k)))
        k += 1
        work.append(("u%02d" % k, "unlink", w_unlinker, (base, name)))
        k += 1
    return work


def _cr_final(nsdir, model, out):
    for base, name, allowed in ((nsdir, "k", ("k", "k.r", "ch")),
                                (p(nsdir, "ch"), "f", ("f", "f.r"))):
        pre = set(model["preexisting"]) if base == nsdir else set()
        found, files = tree_lines(base, lambda n: n in allowed or n in pre, out)
        if name + ".r" in files:
            out.bad("stray_names", "%s.r is left over" % name)
        lines = files.get(name)
        if lines:  # empty (a creator made it) or one whole set
            wid0, s0 = lines[0]
            if lines != [(wid0, s0 + i) for i in range(SET_LINES)]:
                out.bad("torn_files", "%s: not one whole set of lines" % name)


MIXED_GROUPS = (("hash", "mh", ""), ("ns", None, "m"))


def _mx_setup(nsdir, ctx):
    work = []
    k = 0
    g = 0
    for gname, hkey, pre in MIXED_GROUPS:
        base = nsdir
        if hkey:
            os.mkdir(p(nsdir, hkey))
            base = p(nsdir, hkey)
        appended = {}
        for i in range(3):
            wid = "a%02d" % k
            appended["%sa%d" % (pre, i)] = wid
            work.append((wid, "append", w_appender, (base, ["%sa%d" % (pre, i)], k)))
            k += 1
        z = pre + "z"
        work.append(("o%02d" % k, "overwrite", w_overwriter, (base, z, k)))
        k += 1
        work.append(("r%02d" % k, "rename", w_renamer, (base, z, z + ".r", k)))
        k += 1
        work.append(("u%02d" % k, "unlink", w_unlinker, (base, z)))
        k += 1
        allowed = _mx_allowed(gname, ctx["preexisting"])
        work.append(("l%02d" % g, "scan", w_scanner,
                     (base, allowed, appended, {z, z + ".r"})))
        g += 1
    return work


def _mx_names(gname):
    pre = "" if gname == "hash" else "m"
    names = {"%sa%d" % (pre, i) for i in range(3)} | {pre + "z", pre + "z.r"}
    if gname == "ns":
        names.add("mh")
    return names


def _mx_allowed(gname, preexisting):
    names = _mx_names(gname)
    if gname == "ns":
        names |= set(preexisting)
    return lambda n: n in names


def _mx_final(nsdir, model, out):
    k = 0
    for gname, hkey, pre in MIXED_GROUPS:
        base = p(nsdir, hkey) if hkey else nsdir
        appended = {}
        for i in range(3):
            appended["%sa%d" % (pre, i)] = "a%02d" % k
            k += 1
        k += 3
        files_ok = _mx_allowed(gname, model["preexisting"])
        found, files = tree_lines(base, files_ok, out)
        wids = set(appended.values())
        apps = {"appends": [a for a in model["appends"] if a["wid"] in wids]}
        sub = {"appends": apps["appends"]}
        found_apps = {kk: v for kk, v in found.items() if kk[0] in wids}
        account(found_apps, sub, out)
        check_ordered(files, appended, apps, out)
        z = pre + "z"
        if z + ".r" in files:
            out.bad("stray_names", "%s.r is left over" % z)
        check_replaced(z, files.get(z), model, out, [])
        if hkey:
            hash_size(base, out)


def hash_size(base, out):
    """A hash directory's st_size is its field count (docs/mapping.md).
    Not checked with KVFS_CONTENTION_LOCAL=1 (a self-test of the driver on
    a local file system, where a directory's size means something else)."""
    if os.environ.get("KVFS_CONTENTION_LOCAL"):
        return
    try:
        n = len(os.listdir(base))
        size = os.stat(base).st_size
    except OSError as e:
        out.bad("errors", "hash size of %s: %s" % (base, e))
        return
    if n != size:
        out.bad("bad_hash_size", "%s: st_size %d but %d fields listed"
                % (os.path.basename(base), size, n))


SCENARIOS = {
    "rename-append": (_ra_setup, _ra_final),
    "append-list": (_al_setup, _al_final),
    "read-torn": (_rt_setup, _rt_final),
    "create-race": (_cr_setup, _cr_final),
    "mixed": (_mx_setup, _mx_final),
}

# ----------------------------------------------------------- the driver


class Report:
    KEYS = ("acknowledged", "lost", "duplicated", "foreign", "out_of_order", "torn_reads",
            "stale_reads", "bad_sizes", "torn_files", "stray_names", "bad_hash_size",
            "unexpected_errors")

    def __init__(self):
        self.counts = {}
        self.examples = {}
        self.info = {}
        self.errors = {}

    def count(self, k, n=1):
        self.counts[k] = self.counts.get(k, 0) + n

    def bad(self, k, text, n=1):
        self.count(k, n)
        ex = self.examples.setdefault(k, [])
        if len(ex) < MAX_EXAMPLES:
            ex.append(text)

    def violations(self):
        return sum(v for k, v in self.counts.items() if k != "acknowledged")

    def show(self, scenario, phase):
        v = self.violations()
        parts = ["%s=%d" % (k, self.counts.get(k, 0)) for k in self.KEYS]
        for k, n in sorted(self.info.items()):
            parts.append("%s=%s" % (k, n))
        if self.errors:
            parts.append("errors=" + ",".join("%s:%d" % (k.replace(" ", "/"), n)
                                             for k, n in sorted(self.errors.items())))
        print("%s %s: %s %s" % (scenario, phase, "FAIL" if v else "OK", " ".join(parts)))
        for k in sorted(self.examples):
            for t in self.examples[k]:
                print("  %s: %s" % (k, t))
        sys.stdout.flush()
        return v


def spawn(ctx, statedir, wid, role, fn, args):
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        w = Worker(ctx, wid, role)
        try:
            fn(w, *args)
        finally:
            w.dump(statedir)
    except BaseException:
        with open(os.path.join(statedir, "crash-%s.txt" % wid), "w") as f:
            traceback.print_exc(file=f)
        code = 3
    os._exit(code)


def merge(statedir, ctx, work):
    model = {"appends": [], "replaces": [], "unlinks": [], "init": ctx.get("init", []),
             "preexisting": ctx["preexisting"]}
    for r in ctx.get("init_replaces", []):
        model["replaces"].append(dict(zip(("name", "wid", "seq", "t0", "t1", "st"), r)))
    logs = []
    for wid, role, _, _ in work:
        path = os.path.join(statedir, "log-%s.json" % wid)
        with open(path) as f:
            lg = json.load(f)
        logs.append(lg)
        for a in lg["appends"]:
            model["appends"].append(dict(zip(("name", "seq", "t0", "t1", "st"), a), wid=wid))
        for r in lg["replaces"]:
            model["replaces"].append(dict(zip(("name", "wid", "seq", "t0", "t1", "st"), r)))
        for u in lg["unlinks"]:
            model["unlinks"].append(dict(zip(("name", "t0", "t1"), u)))
    return model, logs


def run(scenario, nsdir, statedir, seconds):
    setup, final = SCENARIOS[scenario]
    os.makedirs(statedir, exist_ok=True)
    for f in os.listdir(statedir):
        if f.startswith(("log-", "crash-")) or f == "model.json":
            os.unlink(os.path.join(statedir, f))
    ctx = {"preexisting": sorted(os.listdir(nsdir))}
    work = setup(nsdir, ctx)
    nslots = 64
    ctx["acked"] = RawArray("q", [-1] * nslots)
    ctx["issued"] = RawArray("q", [-1] * nslots)
    # slot of each writer id (for the readers' "was it ever written" check)
    slots = {"i00": nslots - 1}
    for wid, role, fn, args in work:
        if role in ("append", "overwrite") or (role == "rename" and fn is w_renamer):
            slots[wid] = args[-1] if role != "append" else args[2]
    ctx["slots"] = slots
    ctx["issued"][nslots - 1] = 10**7
    ctx["deadline"] = mono() + int(seconds * 1e9)
    pids = {}
    for wid, role, fn, args in work:
        pids[spawn(ctx, statedir, wid, role, fn, args)] = wid
    rep = Report()
    hard = time.monotonic() + seconds + 120
    while pids:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            if time.monotonic() > hard:
                for pid in list(pids):  # stuck in the file system: give up
                    os.kill(pid, 9)
                    rep.bad("unexpected_errors", "worker %s hung; killed" % pids[pid])
                hard = float("inf")
            time.sleep(0.05)
            continue
        wid = pids.pop(pid)
        if status:
            crash = os.path.join(statedir, "crash-%s.txt" % wid)
            text = open(crash).read() if os.path.exists(crash) else ""
            rep.bad("unexpected_errors", "worker %s exited with status %d %s"
                    % (wid, status, text.strip().splitlines()[-1:] if text else ""))
    for wid, role, fn, args in work:
        if not os.path.exists(os.path.join(statedir, "log-%s.json" % wid)):
            print("%s run: FAIL worker %s left no log" % (scenario, wid))
            return 1
    model, logs = merge(statedir, ctx, work)
    ops = {}
    for lg in logs:
        ops[lg["role"]] = ops.get(lg["role"], 0) + lg["ops"]
        for k, n in lg["errors"].items():
            rep.errors[k] = rep.errors.get(k, 0) + n
        u = sum(lg["unexpected"].values())
        if u:
            rep.count("unexpected_errors", u)
        for src, dst in (("torn", "torn_reads"), ("stale", "stale_reads"),
                         ("strays", "stray_names"), ("bad_sizes", "bad_sizes")):
            if lg[src]:
                rep.count(dst, lg[src])
        for e in lg["examples"]:
            rep.examples.setdefault("worker", [])
            if len(rep.examples["worker"]) < 2 * MAX_EXAMPLES:
                rep.examples["worker"].append(e)
        if lg["reads"]:
            rep.info["reads"] = rep.info.get("reads", 0) + lg["reads"]
    rep.info["ops"] = ",".join("%s:%d" % kv for kv in sorted(ops.items()))
    rep.info["opens_failed"] = sum(n for k, n in rep.errors.items()
                                   if k.startswith("open") and not k.startswith("open-read"))
    with open(os.path.join(statedir, "model.json.tmp"), "w") as f:
        json.dump(model, f)
    os.rename(os.path.join(statedir, "model.json.tmp"), os.path.join(statedir, "model.json"))
    final(nsdir, model, rep)
    return 1 if rep.show(scenario, "run") else 0


def check(scenario, nsdir, statedir):
    _, final = SCENARIOS[scenario]
    with open(os.path.join(statedir, "model.json")) as f:
        model = json.load(f)
    rep = Report()
    final(nsdir, model, rep)
    return 1 if rep.show(scenario, "check") else 0


def ldb_hash(metascan, defaultscan, key, ns="__namespace"):
    """Compare a hash's metadata size with its sub-key records, from
    `ldb --hex scan` dumps of the metadata and default column families
    (docs/encoding.md: NS | key -> flags expire version size;
    NS | key_len | key | version | field -> value)."""
    nsb = bytes([len(ns)]) + ns.encode()
    mkey = (nsb + key.encode()).hex().upper()
    meta = None
    for ln in open(metascan):
        parts = ln.split()
        if len(parts) >= 3 and parts[0] == "0x" + mkey:
            meta = bytes.fromhex(parts[2][2:])
    if meta is None:
        print("ldb-hash: no metadata record for %s" % key)
        return 1
    if meta[0] & 0x0F != 2:
        print("ldb-hash: %s is not a hash (flags %02x)" % (key, meta[0]))
        return 1
    version = meta[9:17]
    size = int.from_bytes(meta[17:25], "big")
    prefix = "0x" + (nsb + len(key).to_bytes(4, "big") + key.encode() + version).hex().upper()
    n = 0
    for ln in open(defaultscan):
        if ln.startswith(prefix):
            n += 1
    print("ldb-hash %s: size=%d subkeys=%d %s" % (key, size, n, "OK" if n == size else "FAIL"))
    return 0 if n == size else 1


def main(argv):
    if len(argv) >= 2 and argv[1] == "list":
        print("\n".join(SCENARIOS))
        return 0
    if len(argv) >= 5 and argv[1] in ("run", "check") and argv[2] in SCENARIOS:
        if argv[1] == "check":
            return check(argv[2], argv[3], argv[4])
        secs = float(argv[5]) if len(argv) > 5 else float(
            os.environ.get("KVFS_CONTENTION_SECONDS", "8"))
        return run(argv[2], argv[3], argv[4], secs)
    if len(argv) >= 5 and argv[1] == "ldb-hash":
        return ldb_hash(*argv[2:6])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
