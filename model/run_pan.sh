#!/bin/sh
# run_pan.sh -- one spin verification run of awa_locks.pml, judged.
#
# usage: run_pan.sh EXPECT NAME "SPIN_DEFINES" "CC_FLAGS" "PAN_FLAGS"
#
#   EXPECT  pass          exhaustive search, "errors: 0", nothing truncated
#           fail:TEXT     errors >= 1, a trail written, and the first error
#                         reported by pan contains TEXT
#           reach:N       reachability witness N: like fail:, with the
#                         witness assertion (N!=N) as the error
#   NAME    build subdirectory ($BUILD/NAME) and label
#
# Generates pan with `spin -a`, compiles it, runs it, prints one summary
# line (and, for a failing run, the story of its trail) and exits non-zero
# when the outcome is not the expected one.  Everything it writes stays in
# $BUILD/NAME.

set -eu

expect=$1
name=$2
defines=$3
ccflags=$4
panflags=$5

SPIN=${SPIN:-spin}
CC=${CC:-gcc}
BUILD=${BUILD:-build}
MODEL=awa_locks.pml

dir=$BUILD/$name
rm -rf "$dir"
mkdir -p "$dir"
cp "$MODEL" "$dir/"
cd "$dir"

die()
{
	echo "FAIL  $name: $*"
	exit 1
}

t0=$(date +%s)

# shellcheck disable=SC2086
$SPIN $defines -a "$MODEL" > spin.log 2>&1 || { cat spin.log; die "spin -a failed"; }
# shellcheck disable=SC2086
$CC $ccflags -w -o pan pan.c > cc.log 2>&1 || { cat cc.log; die "compiling pan failed"; }
# pan's exit status is not an outcome; its report is
# shellcheck disable=SC2086
./pan $panflags > pan.out 2>&1 || true

t1=$(date +%s)

states=$(awk '/states, stored/ { print $1; exit }' pan.out)
errors=$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' pan.out | head -n 1)
depth=$(sed -n 's/.*depth reached \([0-9][0-9]*\),.*/\1/p' pan.out | head -n 1)
ptime=$(sed -n 's/^pan: elapsed time \([0-9.e+]*\) seconds.*/\1/p' pan.out | head -n 1)
mem=$(awk '/total actual memory usage/ { print $1; exit }' pan.out)
first=$(grep -m 1 -E '^pan:[0-9]+: ' pan.out | sed 's/^pan:[0-9]*: //' || true)

[ -n "$states" ] && [ -n "$errors" ] || { cat pan.out; die "no pan report"; }

case $expect in
pass)
	grep -q '^Full statespace search' pan.out || die "not a full state-space search"
	if grep -q 'max search depth too small' pan.out; then
		die "search truncated: max search depth too small (raise -m)"
	fi
	if grep -qE 'reached -DMEMLIM bound|out of memory|Search not completed' pan.out; then
		grep -E 'MEMLIM|memory|not completed' pan.out
		die "search not completed"
	fi
	[ "$errors" -eq 0 ] || { grep -E '^pan' pan.out; die "errors: $errors ($first)"; }
	echo "PASS  $name: exhaustive, $states states stored, depth $depth, errors: 0," \
		"pan ${ptime}s, $mem MB, $((t1 - t0))s with compile"
	;;
fail:* | reach:*)
	case $expect in
	fail:*) want=${expect#fail:} ;;
	reach:*) n=${expect#reach:}; want="assertion violated ($n!=$n)" ;;
	esac
	[ "$errors" -ge 1 ] || die "expected a violation, got errors: 0 ($states states)"
	[ -s "$MODEL.trail" ] || die "errors: $errors but no trail file"
	case $first in
	*"$want"*) ;;
	*) die "expected \"$want\", pan reported \"$first\"" ;;
	esac
	if [ "${expect%%:*}" = reach ]; then
		echo "PASS  $name: witness $n reachable ($states states, trail written)"
		exit 0
	fi
	# replay the trail: the story (printf lines) and its length
	# shellcheck disable=SC2086
	$SPIN $defines -t -p "$MODEL" > replay.txt 2>&1 || true
	steps=$(sed -n 's/^spin: trail ends after \([0-9]*\) steps.*/\1/p' replay.txt | tail -n 1)
	# the story: the trail's printf lines of the flips and of the process
	# that failed an assertion (all of them for an invalid end state), up
	# to the first failed assertion
	pid=$(grep -m 1 -A 2 'Error: assertion violated' replay.txt |
		sed -n 's/^ *[0-9]*:[[:space:]]*proc *\([0-9]*\) .*/\1/p' | head -n 1)
	# shellcheck disable=SC2086
	$SPIN $defines -t "$MODEL" 2>&1 |
		grep -E '^ *(awa\.rotate|flip|0\.6 rotator)\[|^spin: text of failed' |
		sed 's/^ *//' | sed '/^spin: text of failed/q' > story_all.txt || true
	if [ -n "$pid" ]; then
		grep -E "\[$pid\]|^flip|^spin" story_all.txt
	else
		grep -E '^flip|^spin' story_all.txt
	fi | tail -n 5 | sed 's/^/        /' > story.txt || true
	echo "PASS  $name: rejected as expected: errors: $errors, $first;" \
		"trail $dir/$MODEL.trail (${steps:-?} steps), $states states, $((t1 - t0))s"
	cat story.txt
	;;
*)
	die "unknown expectation $expect"
	;;
esac
