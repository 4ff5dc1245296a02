#!/usr/bin/env bats
# Multi-series queries of a namespace: TS.MRANGE/MREVRANGE GROUPBY ...
# REDUCE (every reducer Kvrocks has), WITHLABELS and SELECTED_LABELS as
# ":withlabels" and ":labels=A,B", TS.MGET with the same label options, and
# TS.QUERYINDEX as ".queryindex?FILTERS". Expected answers are Kvrocks's
# (src/types/redis_timeseries.cc: MRange, GroupSamplesAndReduce,
# ExtractSelectedLabels), worked by hand.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# Kvrocks's TS.MRANGE example (PR #3167): two stocks, and a bond and an
# unlabelled-by-type series the filter also selects.
stocks() {
	mktype "$NS/stock:A" timeseries
	mktype "$NS/stock:B" timeseries
	mktype "$NS/bond:C" timeseries
	mktype "$NS/other:D" timeseries
	setfattr -n user.kvfs.ts.label.type -v stock "$NS/stock:A"
	setfattr -n user.kvfs.ts.label.name -v A "$NS/stock:A"
	setfattr -n user.kvfs.ts.label.type -v stock "$NS/stock:B"
	setfattr -n user.kvfs.ts.label.name -v B "$NS/stock:B"
	setfattr -n user.kvfs.ts.label.type -v bond "$NS/bond:C"
	setfattr -n user.kvfs.ts.label.name -v C "$NS/bond:C"
	setfattr -n user.kvfs.ts.label.name -v D "$NS/other:D"
	printf '1000,100\n1010,110\n1020,120\n' >>"$NS/stock:A/.add"
	printf '1000,120\n1010,110\n1020,100\n' >>"$NS/stock:B/.add"
	printf '1005,7\n' >>"$NS/bond:C/.add"
	printf '1000,1\n' >>"$NS/other:D/.add"
}

@test "GROUPBY type REDUCE max WITHLABELS: Kvrocks's example, one series per value" {
	stocks
	assert_bytes "$NS/.mrange:-..+:withlabels:groupby=type:reduce=max?type=stock" \
		'type=stock,1000,120,type=stock,__reducer__=max,"__source__=stock:A,stock:B"
type=stock,1010,110,type=stock,__reducer__=max,"__source__=stock:A,stock:B"
type=stock,1020,120,type=stock,__reducer__=max,"__source__=stock:A,stock:B"
'
	# The quoted field reads back with a CSV reader.
	run python3 -c 'import csv,sys; r=list(csv.reader(open(sys.argv[1]))); print(r[0][5])' \
		"$NS/.mrange:-..+:withlabels:groupby=type:reduce=max?type=stock"
	assert_eq "$output" "__source__=stock:A,stock:B"
}

@test "every reducer, by hand; groups in value order; a series without the label is in none" {
	stocks
	f='?name=(A,B,C,D)'
	declare -A want=(
		[max]="7 120 110 120" [min]="7 100 110 100" [sum]="7 220 220 220"
		[avg]="7 110 110 110" [range]="0 20 0 20" [count]="1 2 2 2"
		[var.p]="0 100 0 100" [std.p]="0 10 0 10" [var.s]="0 200 0 200"
		[std.s]="0 14.142135623730951 0 14.142135623730951")
	for r in "${!want[@]}"; do
		read -r c a b d <<<"${want[$r]}"
		assert_bytes "$NS/.mrange:-..+:groupby=type:reduce=$r$f" \
			"type=bond,1005,$c
type=stock,1000,$a
type=stock,1010,$b
type=stock,1020,$d
"
	done
	# Upper case works too; MREVRANGE gives each group newest first.
	assert_bytes "$NS/.mrevrange:-..+:groupby=type:reduce=MAX$f" \
		$'type=bond,1005,7\ntype=stock,1020,120\ntype=stock,1010,110\ntype=stock,1000,120\n'
	# A filter no series with the label passes: nothing.
	assert_bytes "$NS/.mrange:-..+:groupby=type:reduce=max?name=D" ""
}

@test "GROUPBY after aggregation: each series bucketed first, then reduced per bucket" {
	stocks
	# avg over 20 ms: A 105 (100, 110) and 120; B 115 (120, 110) and 100.
	assert_bytes "$NS/.mrange:-..+:avg:20:groupby=type:reduce=max?type=stock" \
		$'type=stock,1000,115\ntype=stock,1020,120\n'
	# count=1 with MREVRANGE: the newest bucket of each series.
	assert_bytes "$NS/.mrevrange:-..+:count=1:groupby=type:reduce=sum?type=stock" \
		$'type=stock,1020,220\n'
}

@test "withlabels and labels=A,B on .mrange, .mget and a group" {
	stocks
	assert_bytes "$NS/.mget:withlabels?name=(C,D)" \
		$'bond:C,1005,7,name=C,type=bond\nother:D,1000,1,name=D\n'
	# Selected labels in name order, once each; "" for one a series lacks.
	assert_bytes "$NS/.mget:labels=type,name,type?name=(C,D)" \
		$'bond:C,1005,7,name=C,type=bond\nother:D,1000,1,name=D,type=\n'
	assert_bytes "$NS/.mrange:1000..1010:labels=name?type=stock" \
		$'stock:A,1000,100,name=A\nstock:A,1010,110,name=A\nstock:B,1000,120,name=B\nstock:B,1010,110,name=B\n'
	# A group's selected labels come from its own label only (Kvrocks).
	assert_bytes "$NS/.mrange:1000..1000:groupby=type:reduce=max:labels=type,name?type=stock" \
		$'type=stock,1000,120,name=,type=stock\n'
}

@test "a label value with a comma, a quote or a newline is one quoted CSV field" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.label.k -v x "$NS/t"
	setfattr -n user.kvfs.ts.label.note -v 'a,"b"' "$NS/t"
	echo "5,1" >>"$NS/t/.add"
	assert_bytes "$NS/.mget:withlabels?k=x" $'t,5,1,k=x,"note=a,""b"""\n'
	run python3 -c 'import csv,sys; print(next(csv.reader(open(sys.argv[1])))[4])' \
		"$NS/.mget:withlabels?k=x"
	assert_eq "$output" 'note=a,"b"'
	# With label fields, a key with a comma is quoted too; without, it is
	# the bare name (the last two fields are the sample).
	mktype "$NS/u,v" timeseries
	setfattr -n user.kvfs.ts.label.k -v y "$NS/u,v"
	echo "6,2" >>"$NS/u,v/.add"
	assert_bytes "$NS/.mget:labels=k?k=y" $'"u,v",6,2,k=y\n'
	assert_bytes "$NS/.mget?k=y" $'u,v,6,2\n'
}

@test ".queryindex?FILTERS lists the keys of the selected series, in key order" {
	stocks
	echo str >"$NS/s"
	assert_bytes "$NS/.queryindex?name=(A,B,C,D),type!=bond" $'other:D\nstock:A\nstock:B\n'
	assert_bytes "$NS/.queryindex?type=nothing" ""
	[ -z "$(ls -A "$NS" | grep queryindex)" ]
	run errno_of 'open(a[0], "w")' "$NS/.queryindex?type=stock"
	assert_eq "$output" EACCES
}

@test "bad options are EINVAL and log why" {
	stocks
	for v in '.mrange:-..+:groupby=type?type=stock' '.mrange:-..+:reduce=max?type=stock' \
		'.mrange:-..+:groupby=type:reduce=median?type=stock' \
		'.mrange:-..+:groupby=type:reduce=first?type=stock' \
		'.mrange:-..+:labels=?type=stock' '.mrange:-..+:labels=a,,b?type=stock' \
		'.mrange:-..+:withlabels:labels=a?type=stock' \
		'.mget:groupby=type:reduce=max?type=stock' '.mget:-..+?type=stock' \
		'.queryindex?type!=stock'; do
		run errno_of 'open(a[0]).read()' "$NS/$v"
		assert_eq "$output" EINVAL "$v"
	done
	grep -q "reducers are avg, sum, min, max, range, count" "$KVFS_LOG"
	grep -q "GROUPBY needs REDUCE" "$KVFS_LOG"
}

@test "the namespace's help names the new views" {
	run getfattr --only-values -n user.kvfs.help "$NS"
	[[ $output == *".queryindex?FILTERS"* ]]
	[[ $output == *"groupby=L:reduce=R"* ]]
	[[ $output == *".mget[:withlabels|:labels=A,B]?FILTERS"* ]]
}
