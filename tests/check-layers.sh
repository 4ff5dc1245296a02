#!/bin/bash
# Enforce the layers of docs/architecture.md ("Layers and folders") by
# reading the #include lines and a few calls of src/ and include/ (run from
# anywhere; `make check-layers`).
#
# A layer is a folder: src/LAYER/*.c, include/LAYER/*.h. Project headers are
# included by their folder ("engine/util.h"), so the folder in an include
# line is the layer it reaches into. Bottom to top:
#
#   folder     holds                          may include (project headers)
#   engine/    util, encoding, names, store   engine/util.h (the store's files also
#              (store, store_*)               engine/store.h, engine/store_int.h)
#   keyspace/  keyspace, ks_*                 engine/*, keyspace/*
#   types/     t_* (types), alg_* (cores)     engine/*, keyspace/* but ks_int.h ks_gc.h,
#                                             types/*
#              alg_* (pure algorithm cores)   engine/util.h, types/alg_*.h only
#   fs/        fs*                            fs/*, types/* (not *_int.h),
#                                             keyspace/keyspace.h keyspace/ks_attr.h,
#                                             engine/names.h engine/util.h
#   src/main.c                                anything
#
# and a module includes its own header. Beside the folders:
#   - a file's name prefix agrees with its folder (t_/alg_ in types/, ks_ and
#     keyspace in keyspace/, fs in fs/; util encoding names store store_* in
#     engine/);
#   - a header named *_int.h is private to its module: keyspace/ks_int.h to
#     keyspace/, fs/fs_int.h to fs/, types/t_X_int.h to the files t_X*
#     (t_timeseries_int.h also to t_ts_*), engine/store_int.h to store*;
#   - <rocksdb/...> only in the store's files (src/engine/store.c,
#     src/engine/store_*.c, include/engine/store_int.h); <fuse*.h> only in fs/ and
#     main.c; <cjson/...> only in the JSON module (t_json*) and main.c;
#   - the types layer reads through the engine (store_get, store_iter_*,
#     store_value_*) but writes only through keyspace/ks_txn.h: no store_batch_*,
#     store_write, store_sync, store_compact, store_open or store_close call in
#     src/types/.
# A file in no folder (or an unknown one) fails. Prints each file it checked;
# exits 1 on any violation.

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

# layer_of FILE -> the folder's layer (engine keyspace types fs main), or nothing
layer_of() {
	case $1 in
	src/main.c) echo main ;;
	src/engine/*.c | include/engine/*.h) echo engine ;;
	src/keyspace/*.c | include/keyspace/*.h) echo keyspace ;;
	src/types/*.c | include/types/*.h) echo types ;;
	src/fs/*.c | include/fs/*.h) echo fs ;;
	esac
}

# name_fits LAYER BASE -> status 0 if the file name's prefix agrees with its folder
name_fits() {
	case $1:$2 in
	engine:util.* | engine:encoding.* | engine:names.* | engine:store.* | engine:store_*) return 0 ;;
	keyspace:keyspace.* | keyspace:ks_*) return 0 ;;
	types:t_* | types:alg_*) return 0 ;;
	fs:fs*) return 0 ;;
	main:main.c) return 0 ;;
	esac
	return 1
}

# allowed LAYER BASE HEADER -> status 0 if file BASE of LAYER may include
# "HEADER" (a folder/name.h path)
allowed() {
	local layer=$1 base=$2 h=$3
	case $layer in
	engine)
		case $base:$h in
		*:engine/util.h | store*:engine/store.h | store*:engine/store_int.h) return 0 ;;
		esac
		return 1
		;;
	keyspace)
		case $h in
		engine/*.h | keyspace/*.h) return 0 ;;
		esac
		return 1
		;;
	types)
		case $base in
		alg_*)
			case $h in
			engine/util.h | types/alg_*.h) return 0 ;;
			esac
			return 1
			;;
		esac
		case $h in
		keyspace/ks_int.h | keyspace/ks_gc.h) return 1 ;;
		engine/*.h | keyspace/*.h | types/*.h) return 0 ;;
		esac
		return 1
		;;
	fs)
		case $h in
		types/*_int.h) return 1 ;;
		fs/*.h | types/*.h | keyspace/keyspace.h | keyspace/ks_attr.h | engine/names.h | engine/util.h)
			return 0
			;;
		esac
		return 1
		;;
	main) return 0 ;;
	esac
	return 1
}

# private_ok BASE HEADER -> status 0 unless HEADER is a *_int.h of another module
private_ok() {
	local base=$1 h=$2 mod
	case $h in
	keyspace/ks_int.h | fs/fs_int.h) return 0 ;; # their folders: checked by allowed
	types/t_timeseries_int.h)
		case $base in
		t_timeseries* | t_ts_*) return 0 ;;
		esac
		return 1
		;;
	types/*_int.h | engine/*_int.h)
		mod=${h#*/}
		mod=${mod%_int.h}
		[[ $base == "$mod"* ]]
		;;
	*) return 0 ;;
	esac
}

# system_allowed FILE LAYER HEADER -> status 0 if FILE may include <HEADER>
system_allowed() {
	local file=$1 layer=$2 h=$3 base
	base=$(basename "$file")
	case $h in
	rocksdb/*)
		case $file in
		src/engine/store.c | src/engine/store_*.c | include/engine/store_int.h) return 0 ;;
		esac
		return 1
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
files=(src/*.c src/*/*.c include/*.h include/*/*.h)
if [ ${#files[@]} -eq 0 ]; then
	echo "check-layers: no sources under $root/src or $root/include"
	exit 1
fi

echo "check-layers: #include lines of ${#files[@]} files against docs/architecture.md"
for file in "${files[@]}"; do
	checked=$((checked + 1))
	problems=()
	layer=$(layer_of "$file")
	base=$(basename "$file")
	if [ -z "$layer" ]; then
		echo "  $file: unknown"
		echo "  VIOLATION $file: not in a layer folder; see tests/check-layers.sh"
		violations=$((violations + 1))
		continue
	fi
	name_fits "$layer" "$base" ||
		fail "$file: its name does not belong in the $layer folder"
	own=$layer/${base%.*}.h
	seen=()
	# "NN:#include <x>" / "NN:#include "x"", tolerating blanks around '#'.
	while IFS= read -r line; do
		n=${line%%:*}
		text=${line#*:}
		if [[ $text =~ include[[:space:]]*\"([^\"]+)\" ]]; then
			h=${BASH_REMATCH[1]}
			seen+=("\"$h\"")
			if [[ $h != */* ]]; then
				fail "$file:$n: include project headers by their folder (\"LAYER/$h\")"
			elif [ ! -e "include/$h" ]; then
				fail "$file:$n: \"$h\" is not a header under include/"
			elif [ "$h" != "$own" ]; then
				allowed "$layer" "$base" "$h" ||
					fail "$file:$n: the $layer layer may not include \"$h\""
				private_ok "$base" "$h" ||
					fail "$file:$n: \"$h\" is private to its module"
			fi
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
	if [ "$layer" = types ] && [[ $file == *.c ]]; then
		while IFS= read -r line; do
			fail "$file:${line%%:*}: the types layer writes only through ks_txn: ${line#*:}"
		done < <(grep -noE '\bstore_(batch_[a-z_]+|write|sync|compact|open|close)[[:space:]]*\(' "$file")
	fi
	echo "  $file ($layer): ${seen[*]:-(no project headers)}"
	[ ${#problems[@]} -eq 0 ] || printf '%s\n' "${problems[@]}"
done

echo "check-layers: $checked files checked, $violations violations"
[ "$violations" -eq 0 ]
