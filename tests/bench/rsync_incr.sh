#!/usr/bin/env bash
# tests/bench/rsync_incr.sh MNT DEST N [PERMILLE]: an incremental backup of
# a kvfs namespace with rsync -aX, as docs/mapping.md section 17 describes.
# Makes the namespace MNT/rsbench of N string keys of 100 bytes, copies it
# to DEST (rsync -aX --stats), changes PERMILLE / 1000 of the keys (default
# 10: 1 %) with same-size writes a second later, and copies it again, with
# no --checksum: rsync finds the changes by size and mtime alone.
# Prints lines "NAME VALUE UNIT":
#   rsync_full_s      the first copy (s)
#   rsync_incr_s      the incremental copy (s)
#   rsync_full_sent   bytes rsync sent in the first copy (--stats)
#   rsync_incr_sent   bytes sent in the incremental copy
#   rsync_incr_files  files the incremental copy transferred (must be the
#                     number changed: none missed, none extra)
#   rsync_incr_same   1 if DEST then equals the namespace (diff -r), else 0
# The namespace is removed at the end (rm -rf).
set -u
mnt=$1 dest=$2 n=$3 pm=${4:-10}
ns=$mnt/rsbench
mkdir "$ns" || exit 1

python3 - "$ns" "$n" <<'EOF' || exit 1
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, "k%06d" % i), "wb") as f:
        f.write(b"%06d" % i + b"a" * 94)
EOF

stats() { # rsync --stats output -> "sent files"
	awk '/^Total bytes sent:/ { gsub(",", "", $4); s = $4 }
	     /^Number of regular files transferred:/ { gsub(",", "", $6); f = $6 }
	     END { print s + 0, f + 0 }'
}

t0=${EPOCHREALTIME/./}
full=$(rsync -aX --stats "$ns/" "$dest/" | stats) || exit 1
t1=${EPOCHREALTIME/./}
sleep 1.1 # rsync compares whole seconds
changed=$((n * pm / 1000))
python3 - "$ns" "$n" "$changed" <<'EOF' || exit 1
import os, sys
d, n, c = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
step = max(1, n // max(c, 1))
for j in range(c):
    i = j * step
    with open(os.path.join(d, "k%06d" % i), "r+b") as f:
        f.write(b"%06d" % i + b"b" * 94)  # same size, other bytes
EOF
t2=${EPOCHREALTIME/./}
incr=$(rsync -aX --stats "$ns/" "$dest/" | stats) || exit 1
t3=${EPOCHREALTIME/./}
same=0
diff -r "$ns" "$dest" >/dev/null && same=1

awk -v a="$t0" -v b="$t1" 'BEGIN { printf "rsync_full_s %.2f s\n", (b - a) / 1e6 }'
awk -v a="$t2" -v b="$t3" 'BEGIN { printf "rsync_incr_s %.2f s\n", (b - a) / 1e6 }'
echo "rsync_full_sent ${full% *} B"
echo "rsync_incr_sent ${incr% *} B"
echo "rsync_incr_files ${incr#* } of $changed changed"
echo "rsync_incr_same $same"
rm -rf "$ns"
