#!/usr/bin/env bats
# Geo on a zset (docs/mapping.md section 14, "Geo"): points added through
# the `.geoadd` input get the scores redis-server's GEOADD gives (checked
# with ZSCORE and, in both column families, with ldb); every view
# (`.geopos:`, `.geodist:`, `.geohash:`, `.geosearch:`) answers byte for
# byte what redis-cli shows for the same ~50 points (the poles' limits,
# the antimeridian, radii that cover whole rings of cells, COUNT ANY);
# the refusals; 4 shells adding 1,000 points at once.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# geo.py: a RESP client of the test's redis-server and the points, for
# the Python parts of the tests (import geo).
geo_py() {
	cat >"$BATS_TEST_TMPDIR/geo.py" <<'PY'
import random, socket, os

class Redis:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.f = self.s.makefile('rb')
    def read(self):
        line = self.f.readline()
        t, rest = line[:1], line[1:-2]
        if t == b'$':
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if t == b'*':
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b':':
            return int(rest)
        if t == b'-':
            raise RuntimeError(rest.decode())
        return rest
    def __call__(self, *args):
        args = [a if isinstance(a, bytes) else str(a).encode() for a in args]
        out = b'*%d\r\n' % len(args)
        for a in args:
            out += b'$%d\r\n%s\r\n' % (len(a), a)
        self.s.sendall(out)
        return self.read()

def points():
    """~50 points, the same on every run: a cluster around Sicily, one
    across the antimeridian, one at the northern limit, the corners of
    the Mercator square, and some anywhere."""
    rnd = random.Random(19)
    pts = [('Palermo', '13.361389', '38.115556'), ('Catania', '15.087269', '37.502669'),
           ('NE', '180', '85.05112878'), ('SW', '-180', '-85.05112878'),
           ('NW', '-180', '85.05112878'), ('SE', '180', '-85.05112878'),
           ('Origin', '0', '0'), ('Paris', '2.3522', '48.8566'), ('SameLon', '2.3522', '40')]
    for i in range(14):
        pts.append(('sic%02d' % i, '%.6f' % rnd.uniform(12, 16.5), '%.6f' % rnd.uniform(36, 39)))
    for i in range(10):
        lon = rnd.uniform(179, 180) * rnd.choice((1, -1))
        pts.append(('am%02d' % i, '%.6f' % lon, '%.6f' % rnd.uniform(-4, 4)))
    for i in range(6):
        pts.append(('pole%d' % i, '%.6f' % rnd.uniform(-180, 180), '%.6f' % rnd.uniform(83, 85.05)))
    for i in range(11):
        pts.append(('w%02d' % i, '%.6f' % rnd.uniform(-180, 180), '%.6f' % rnd.uniform(-85, 85)))
    return pts

def cat(path):
    import subprocess
    r = subprocess.run(['cat', path], capture_output=True)
    return r.stdout if r.returncode == 0 else ('error: ' + r.stderr.decode())
PY
}

# put_points Z: the points added through Z/.geoadd in one write (and to
# redis-server by one GEOADD).
put_points() {
	python3 - "$BATS_TEST_TMPDIR" "$RSOCK" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import geo
r = geo.Redis(sys.argv[2])
pts = geo.points()
args = []
for m, lon, lat in pts:
    args += [lon, lat, m]
r('DEL', 'z')
assert r('GEOADD', 'z', *args) == len(pts)
with open(sys.argv[3] + '/.geoadd', 'w') as f:
    f.write(''.join('%s,%s,%s\n' % (lon, lat, m) for m, lon, lat in pts))
PY
}

@test "points added through .geoadd get redis-server's scores (ZSCORE), and ldb shows them in both column families" {
	redis_start
	geo_py
	mktype "$NS/z" zset
	put_points "$NS/z"
	python3 - "$BATS_TEST_TMPDIR" "$RSOCK" "$NS/z" >"$BATS_TEST_TMPDIR/want" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import geo
r = geo.Redis(sys.argv[2])
bad = 0
for m, lon, lat in geo.points():
    want = int(r('ZSCORE', 'z', m))
    got = open(sys.argv[3] + '/' + m).read()
    if got != '%d\n' % want:
        print('%s: kvfs %r, redis %d' % (m, got, want), file=sys.stderr); bad += 1
    # The records, as ldb prints them: the member's (default CF, its score
    # a sortable double: a positive double with the sign bit set) and the
    # score index's (zset_score CF).
    b = bytearray(struct.pack('>d', float(want)))
    b[0] |= 0x80
    print('%s %s' % (m.encode().hex().upper(), b.hex().upper()))
sys.exit(1 if bad else 0)
PY
	assert_eq "$(ls "$NS/z" | wc -l)" 50 "members"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex z)"
	[[ $output =~ ^850000000000000000([0-9A-F]{16})00000000000000(32)$ ]] || {
		echo "metadata of z: $output" >&2
		false
	}
	sub="${NS_HEX}000000017A${BASH_REMATCH[1]}"
	ldb_scan default | awk -v p="0x$sub" 'substr($1, 1, length(p)) == p {
		v = $3; sub(/^0x/, "", v); print substr($1, length(p) + 1), v }' |
		LC_ALL=C sort >"$BATS_TEST_TMPDIR/members"
	LC_ALL=C sort "$BATS_TEST_TMPDIR/want" >"$BATS_TEST_TMPDIR/want.sorted"
	diff "$BATS_TEST_TMPDIR/want.sorted" "$BATS_TEST_TMPDIR/members"
	ldb_scan zset_score | awk -v p="0x$sub" 'substr($1, 1, length(p)) == p {
		k = substr($1, length(p) + 1); print substr(k, 17), substr(k, 1, 16), $3 }' |
		LC_ALL=C sort >"$BATS_TEST_TMPDIR/index"
	sed 's/$/ 0x/' "$BATS_TEST_TMPDIR/want" | LC_ALL=C sort >"$BATS_TEST_TMPDIR/want.index"
	diff "$BATS_TEST_TMPDIR/want.index" "$BATS_TEST_TMPDIR/index"
}

@test ".geopos, .geodist, .geohash answer what redis-cli shows for the same points" {
	redis_start
	geo_py
	mktype "$NS/z" zset
	put_points "$NS/z"
	python3 - "$BATS_TEST_TMPDIR" "$RSOCK" "$NS/z" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import geo
r = geo.Redis(sys.argv[2])
z = sys.argv[3]
members = [m for m, _, _ in geo.points()]
bad = 0
def check(name, want):
    global bad
    got = geo.cat(z + '/' + name)
    if got != want:
        print('%s:\n  kvfs  %r\n  redis %r' % (name, got, want)); bad += 1
# GEOPOS of all, 10 at a time, a missing member among them
for i in range(0, len(members), 10):
    ms = members[i:i + 10] + ['nope']
    want = b''.join(b'\n' if p is None else p[0] + b',' + p[1] + b'\n'
                    for p in r('GEOPOS', 'z', *ms))
    check('.geopos:' + ','.join(ms), want)
    want = b''.join(b'\n' if h is None else h + b'\n' for h in r('GEOHASH', 'z', *ms))
    check('.geohash:' + ','.join(ms), want)
# GEODIST: every member to a few others, in every unit
for a in ('Palermo', 'NE', 'am03', 'Origin', 'SameLon'):
    for b in members:
        for unit in ('', 'm', 'km', 'ft', 'mi', 'KM'):
            d = r('GEODIST', 'z', a, b, *([unit] if unit else []))
            check('.geodist:%s,%s%s' % (a, b, ':' + unit if unit else ''), d + b'\n')
check('.geodist:Palermo,nope', b'')
check('.geodist:nope,Palermo:km', b'')
sys.exit(1 if bad else 0)
PY
}

@test ".geosearch answers what redis-cli's GEOSEARCH shows: radius, box, member, lon-lat, units, ASC, DESC, COUNT, COUNT ANY, WITH*" {
	redis_start
	geo_py
	mktype "$NS/z" zset
	put_points "$NS/z"
	python3 - "$BATS_TEST_TMPDIR" "$RSOCK" "$NS/z" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import geo
r = geo.Redis(sys.argv[2])
z = sys.argv[3]
froms = [('member=Palermo', ['FROMMEMBER', 'Palermo']),
         ('lonlat=15,37', ['FROMLONLAT', '15', '37']),
         ('lonlat=179.9,0', ['FROMLONLAT', '179.9', '0']),        # the antimeridian
         ('lonlat=-180,1.5', ['FROMLONLAT', '-180', '1.5']),
         ('member=NE', ['FROMMEMBER', 'NE']),                      # the northern limit
         ('lonlat=0,85.05112878', ['FROMLONLAT', '0', '85.05112878']),
         ('member=SW', ['FROMMEMBER', 'SW']),
         ('lonlat=0,0', ['FROMLONLAT', '0', '0']),
         ('member=w03', ['FROMMEMBER', 'w03'])]
bys = [('radius=0:m', ['BYRADIUS', '0', 'm']),
       ('radius=150:km', ['BYRADIUS', '150', 'km']),
       ('radius=400:km', ['BYRADIUS', '400', 'km']),
       ('radius=250:mi', ['BYRADIUS', '250', 'mi']),
       ('radius=3000000:ft', ['BYRADIUS', '3000000', 'ft']),
       ('radius=6000:km', ['BYRADIUS', '6000', 'km']),            # whole rings of cells
       ('radius=20000:km', ['BYRADIUS', '20000', 'km']),          # the whole earth
       ('box=400,300:km', ['BYBOX', '400', '300', 'km']),
       ('box=2000,800:km', ['BYBOX', '2000', '800', 'km']),
       ('box=25000,9000:km', ['BYBOX', '25000', '9000', 'km']),
       ('box=300000,200000:M', ['BYBOX', '300000', '200000', 'M'])]
opts = [([], []), (['withdist'], ['WITHDIST']), (['withcoord', 'withhash'], ['WITHCOORD', 'WITHHASH']),
        (['desc', 'withdist', 'withhash', 'withcoord'], ['DESC', 'WITHDIST', 'WITHHASH', 'WITHCOORD']),
        (['count=3'], ['COUNT', '3']), (['count=4', 'any'], ['COUNT', '4', 'ANY']),
        (['count=2', 'any', 'asc', 'withdist'], ['COUNT', '2', 'ANY', 'ASC', 'WITHDIST']),
        (['count=7', 'any', 'desc', 'withdist'], ['COUNT', '7', 'ANY', 'DESC', 'WITHDIST']),
        (['asc'], ['ASC'])]
bad = n = found = 0
for fname, fargs in froms:
    for bname, bargs in bys:
        for oname, oargs in opts:
            name = '.geosearch:' + ':'.join([fname, bname] + oname)
            args = ['GEOSEARCH', 'z'] + fargs + bargs + oargs
            # Without ASC or DESC kvfs shows the nearest first: compare with
            # Redis's ASC, which sorts after COUNT ANY picked its matches.
            if 'ASC' not in oargs and 'DESC' not in oargs:
                args.append('ASC')
            reply = r(*args)
            lines = []
            for item in reply:
                if isinstance(item, bytes):
                    lines.append(item)
                    continue
                f, rest = [item[0]], item[1:]
                if 'WITHDIST' in oargs:
                    f.append(rest.pop(0))
                if 'WITHHASH' in oargs:
                    f.append(str(rest.pop(0)).encode())
                if 'WITHCOORD' in oargs:
                    lon, lat = rest.pop(0)
                    f.append(lon + b',' + lat)
                lines.append(b'\t'.join(f))
            want = b''.join(l + b'\n' for l in lines)
            got = geo.cat(z + '/' + name)
            n += 1
            found += len(lines)
            if got != want:
                print('%s:\n  kvfs  %r\n  redis %r' % (name, got, want)); bad += 1
print('%d searches, %d matches, %d differ' % (n, found, bad))
sys.exit(1 if bad or found < 1000 else 0)
PY
}

@test "items in geo names: a ',' or ':' inside a member is escaped, and search lines escape members" {
	redis_start
	geo_py
	mktype "$NS/z" zset
	# the member bytes "a,b:c d" and "50%"
	printf '13.4,38.1,a%%2Cb%%3Ac d\n13.5,38.2,50%%25\n' >>"$NS/z/.geoadd"
	redis-cli -s "$RSOCK" geoadd z 13.4 38.1 'a,b:c d' 13.5 38.2 '50%' >/dev/null
	assert_eq "$(ls "$NS/z" | LC_ALL=C sort | paste -sd' ')" "50%25 a,b:c d" "members"
	want=$(redis-cli -s "$RSOCK" geopos z 'a,b:c d' 50% | paste -d, - -)
	assert_eq "$(cat "$NS/z/.geopos:a%252Cb%253Ac d,50%25")" "$want" "geopos"
	want=$(redis-cli -s "$RSOCK" geodist z 'a,b:c d' 50% km)
	assert_eq "$(cat "$NS/z/.geodist:a%252Cb%253Ac d,50%25:km")" "$want" "geodist"
	assert_eq "$(cat "$NS/z/.geosearch:member=a%252Cb%253Ac d:radius=50:km" | paste -sd' ')" \
		"a%2Cb:c d 50%25" "search"
}

# geoadd_rw INPUT LINES: write LINES (printf escapes) to INPUT in one
# write on a read-write open, then print what a read of that open answers
# (GEOADD's reply). fd 3 is bats's own: Python holds the descriptor.
geoadd_rw() {
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.write(fd, sys.argv[2].encode().decode("unicode_escape").encode())
sys.stdout.write(os.read(fd, 100).decode())
os.close(fd)
' "$1" "$2"
}

@test ".geoadd:nx, :xx and :ch: what GEOADD's options do, and its reply read back on the open that wrote" {
	redis_start
	mktype "$NS/z" zset
	R="redis-cli -s $RSOCK"
	assert_eq "$(geoadd_rw "$NS/z/.geoadd" '13.361389,38.115556,Palermo\n15.087269,37.502669,Catania\n')" \
		"$($R geoadd z 13.361389 38.115556 Palermo 15.087269 37.502669 Catania)" "reply of the add"
	assert_eq "$(geoadd_rw "$NS/z/.geoadd:nx" '1,1,Palermo\n2,2,Rome\n')" \
		"$($R geoadd z nx 1 1 Palermo 2 2 Rome)" "reply of nx"
	assert_eq "$(geoadd_rw "$NS/z/.geoadd:xx:ch" '3,3,Catania\n4,4,Milan\n')" \
		"$($R geoadd z xx ch 3 3 Catania 4 4 Milan)" "reply of xx ch"
	assert_eq "$(geoadd_rw "$NS/z/.geoadd:CH" '3,3,Catania\n5,5,Palermo\n6,6,Turin\n')" \
		"$($R geoadd z ch 3 3 Catania 5 5 Palermo 6 6 Turin)" "reply of ch"
	assert_eq "$(geoadd_rw "$NS/z/.geoadd" '6,6,Turin\n7,7,Turin\n8,8,Bari\n')" \
		"$($R geoadd z 6 6 Turin 7 7 Turin 8 8 Bari)" "reply with a member given twice"
	for m in Palermo Catania Rome Turin Bari; do
		assert_eq "$(cat "$NS/z/$m")" "$($R zscore z $m)" "score of $m"
	done
	[ ! -e "$NS/z/Milan" ]
	assert_eq "$(cat "$NS/z/.geoadd")" "" "the input reads empty"
}

@test "refusals: out-of-range points and bad lines add nothing; bad names are EINVAL; a search from a missing member is ENOENT" {
	mktype "$NS/z" zset
	echo 13.361389,38.115556,Palermo >>"$NS/z/.geoadd"
	before=$(cat "$NS/z/.by-score")
	for lines in '1,1,a\n180.0001,0,b\n' '1,1,a\n0,85.05112879,b\n' '1,1,a\n0,-85.06,b\n' \
		'1,1,a\n-181,0,b\n' '1,1,a\n1,1\n' '1,1,a\n\n2,2,b\n' '1,x,a\n' 'nan,0,a\n' \
		'inf,0,a\n' '1,1,a\n1;1;b\n'; do
		run errno_of 'f = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(f, a[1].encode().decode("unicode_escape").encode())' \
			"$NS/z/.geoadd" "$lines"
		assert_eq "$output" EINVAL "write of '$lines'"
		assert_eq "$(cat "$NS/z/.by-score")" "$before" "nothing added by '$lines'"
	done
	grep -q "invalid longitude,latitude pair 180.000100,0.000000" "$KVFS_LOG"
	grep -q "line 2 is not LON,LAT,MEMBER" "$KVFS_LOG"
	for name in .geoadd:nx:xx .geoadd:gt .geoadd:nx:nx .geodist:Palermo .geodist:a,b,c \
		.geodist:Palermo,Palermo:yd .geopos:Palermo:km .geopos:a,,b .geohash: \
		.geosearch:member=Palermo:radius=1 .geosearch:member=Palermo:km \
		.geosearch:radius=1:km .geosearch:member=Palermo:lonlat=1,1:radius=1:km \
		.geosearch:member=Palermo:radius=1:box=1,1:km .geosearch:member=Palermo:radius=-1:km \
		.geosearch:member=Palermo:box=-1,1:km .geosearch:member=Palermo:radius=1:km:any \
		.geosearch:member=Palermo:radius=1:km:count=0 .geosearch:lonlat=181,0:radius=1:km \
		.geosearch:lonlat=0,86:radius=1:km .geosearch:lonlat=0:radius=1:km \
		.geosearch:member=Palermo:radius=1:km:asc:desc .geosearch:member=Palermo:radius=1:km:foo \
		.geosearch:member=Palermo:radius=x:km .geosearch:member=Palermo:radius=1:km:withdist:withdist; do
		run errno_of 'open(a[0]).read()' "$NS/z/$name"
		assert_eq "$output" EINVAL "$name"
	done
	run errno_of 'open(a[0]).read()' "$NS/z/.geosearch:member=nope:radius=1:km"
	assert_eq "$output" ENOENT "search from a missing member"
	grep -q "could not decode requested zset member" "$KVFS_LOG"
	# views are read-only, the input cannot be removed or renamed
	run errno_of 'open(a[0], "w")' "$NS/z/.geopos:Palermo"
	assert_eq "$output" EACCES "writing a view"
	run errno_of 'os.unlink(a[0])' "$NS/z/.geoadd"
	assert_eq "$output" EACCES "rm of the input"
	run errno_of 'os.rename(a[0], a[1])' "$NS/z/.geoadd" "$NS/z/x"
	assert_eq "$output" EACCES "mv of the input"
	assert_eq "$(cat "$NS/z/.by-score")" "$before" "nothing changed"
	assert_eq "$(ls -A "$NS/z")" "Palermo" "views and the input are not listed"
	# a member without a geohash score has no position
	echo -5 >"$NS/z/neg"
	assert_eq "$(cat "$NS/z/.geopos:neg,Palermo" | head -1)" "" "geopos of a negative score"
}

@test "4 shells each add 250 distinct points through .geoadd at once: 1,000 members with redis-server's scores" {
	redis_start
	mktype "$NS/z" zset
	for p in 1 2 3 4; do
		python3 -c '
import random, sys
rnd = random.Random(int(sys.argv[1]))
for i in range(250):
    print("%.6f,%.6f,p%s-%d" % (rnd.uniform(-180, 180), rnd.uniform(-85, 85), sys.argv[1], i))
' "$p" >"$BATS_TEST_TMPDIR/lines$p"
	done
	pids=()
	for p in 1 2 3 4; do
		(while IFS= read -r line; do echo "$line" >>"$NS/z/.geoadd"; done <"$BATS_TEST_TMPDIR/lines$p") &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid"; done
	assert_eq "$(ls "$NS/z" | wc -l)" 1000 "members"
	cat "$BATS_TEST_TMPDIR"/lines? | awk -F, '{ print $1, $2, $3 }' |
		xargs -n 300 redis-cli -s "$RSOCK" geoadd z >/dev/null
	want=$(redis-cli -s "$RSOCK" zrange z 0 -1 withscores | paste - - | awk -F'\t' '{ print $2 "\t" $1 }')
	got=$(cut -f2,3 "$NS/z/.by-score")
	assert_eq "$got" "$want" "scores and order"
}
