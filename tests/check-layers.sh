#!/bin/bash
# Enforce the layer table of DESIGN.md section 3 by reading the #include
# lines of src/*.c, src/*.h and include/*.h (run from anywhere; `make check-layers`).
#
# A module may include its own header, the project headers its layer allows
# ("..." includes, compared by base name) and any system header except these,
# which belong to one layer:
#   <rocksdb/...>         only src/store.c (RocksDB never leaves the store)
#   <fuse*.h>, <fuse3/..> only the fs layer and main.c
#   <cjson/...>           only the JSON module (t_json*.c/.h) and main.c
# and one project header belongs to one module:
#   "t_json_int.h"        only the JSON module's files (t_json*.c/.h)
#
#   file                 layer     may include (project headers)
#   util.c/h             util      util.h
#   encoding.c/h         encoding  util.h
#   names.c/h            names     util.h
#   store.c/h            store     util.h
#   keyspace.c/h         keyspace  store.h encoding.h names.h util.h
#   ks_*.c/h             keyspace  (the same, and keyspace.h ks_*.h)
#   alg_*.c/h            algorithms util.h alg_*.h (pure cores: HLL, bloom, ...)
#   t_*.c/h              types     keyspace.h ks_txn.h store.h encoding.h util.h t_*.h alg_*.h
#   fs*.c/h              fs        t_*.h keyspace.h ks_attr.h names.h util.h fs*.h
#                                  (never store.h or encoding.h)
#   main.c               main      anything
# A file in no row fails: give it a row here before it can be built.
# Prints each file it checked; exits 1 on any violation.

set -u

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2

violations=0
checked=0

problems=()
fail() {
	problems+=("  VIOLATION $*")
	violations=$((violations + 1))
}

# layer_of FILE -> layer name, or nothing if the file fits no row
layer_of() {
	case $(basename "$1") in
	util.c | util.h) echo util ;;
	encoding.c | encoding.h) echo encoding ;;
	names.c | names.h) echo names ;;
	store.c | store.h) echo store ;;
	keyspace.c | keyspace.h | ks_*.c | ks_*.h) echo keyspace ;;
	alg_*.c | alg_*.h) echo algorithms ;;
	t_*.c | t_*.h) echo types ;;
	fs*.c | fs*.h) echo fs ;;
	main.c) echo main ;;
	esac
}

# allowed LAYER OWN_HEADER HEADER -> status 0 if the layer may include HEADER
allowed() {
	local layer=$1 own=$2 h=$3
	[ "$h" = "$own" ] && return 0
	case $layer in
	util | encoding | names | store)
		[ "$h" = util.h ]
		;;
	algorithms)
		case $h in
		util.h | alg_*.h) return 0 ;;
		esac
		return 1
		;;
	keyspace)
		case $h in
		store.h | encoding.h | names.h | util.h | keyspace.h | ks_*.h) return 0 ;;
		esac
		return 1
		;;
	types)
		case $h in
		keyspace.h | ks_txn.h | store.h | encoding.h | util.h | t_*.h | alg_*.h) return 0 ;;
		esac
		return 1
		;;
	fs)
		case $h in
		t_*.h | keyspace.h | ks_attr.h | names.h | util.h | fs*.h) return 0 ;;
		esac
		return 1
		;;
	main) return 0 ;;
	*) return 1 ;;
	esac
}

# system_allowed FILE LAYER HEADER -> status 0 if FILE may include <HEADER>
system_allowed() {
	local file=$1 layer=$2 h=$3 base
	base=$(basename "$file")
	case $h in
	rocksdb/*)
		[ "$file" = src/store.c ]
		;;
	fuse.h | fuse_*.h | fuse3/*)
		[ "$layer" = fs ] || [ "$layer" = main ]
		;;
	cjson/* | cJSON.h)
		case $base in
		t_json.c | t_json.h | t_json_*.c | t_json_*.h | main.c) return 0 ;;
		esac
		return 1
		;;
	*) return 0 ;;
	esac
}

shopt -s nullglob
files=(src/*.c src/*.h include/*.h)
if [ ${#files[@]} -eq 0 ]; then
	echo "check-layers: no sources under $root/src or $root/include"
	exit 1
fi

echo "check-layers: #include lines of ${#files[@]} files against DESIGN.md section 3"
for file in "${files[@]}"; do
	checked=$((checked + 1))
	problems=()
	layer=$(layer_of "$file")
	if [ -z "$layer" ]; then
		echo "  $file: unknown"
		echo "  VIOLATION $file: no layer rule for this file; add a row to tests/check-layers.sh"
		violations=$((violations + 1))
		continue
	fi
	own=$(basename "${file%.*}").h
	seen=()
	# "NN:#include <x>" / "NN:#include "x"", tolerating blanks around '#'.
	while IFS= read -r line; do
		n=${line%%:*}
		text=${line#*:}
		if [[ $text =~ include[[:space:]]*\"([^\"]+)\" ]]; then
			h=$(basename "${BASH_REMATCH[1]}")
			seen+=("\"$h\"")
			allowed "$layer" "$own" "$h" ||
				fail "$file:$n: the $layer layer may not include \"$h\""
			[ "$h" != t_json_int.h ] || [[ $(basename "$file") == t_json* ]] ||
				fail "$file:$n: \"$h\" is private to the JSON module (t_json*.c)"
		elif [[ $text =~ include[[:space:]]*\<([^\>]+)\> ]]; then
			h=${BASH_REMATCH[1]}
			case $h in
			rocksdb/* | fuse* | cjson/* | cJSON.h) seen+=("<$h>") ;;
			esac
			system_allowed "$file" "$layer" "$h" ||
				fail "$file:$n: the $layer layer may not include <$h>"
		elif [[ $text =~ include ]]; then
			fail "$file:$n: cannot read this #include: $text"
		fi
	done < <(grep -nE '^[[:space:]]*#[[:space:]]*include' "$file")
	echo "  $file ($layer): ${seen[*]:-(no project headers)}"
	[ ${#problems[@]} -eq 0 ] || printf '%s\n' "${problems[@]}"
done

echo "check-layers: $checked files checked, $violations violations"
[ "$violations" -eq 0 ]
