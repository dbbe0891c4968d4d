#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Fuzzes the Darshan log reader (lib/darshan/darshan.c) and what ioreport --compare
# does with a log (lib/render/compare.c) with libFuzzer under AddressSanitizer
# and UBSan, for IOACCT_FUZZ_SECONDS (60 by default). The seed corpus is made
# here: the sample logs beside the source tree (../shared/darshan-logs, when
# there) and logs written by ioacct (mkseed). A crash, a leak, a timeout or
# a failed round trip fails the test; its input is kept in the build tree as
# tests/fuzz/crash-* (or leak-*, timeout-*) to replay with
# `tests/fuzz/fuzz_darshan FILE`. Skips (77) where clang cannot link
# libFuzzer (Debian: apt-get install libclang-rt-dev).
set -u
: "${abs_top_builddir:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${abs_top_srcdir:=$(cd "$(dirname "$0")/../.." && pwd)}"
CLANG=${CLANG:-clang}
SECS=${IOACCT_FUZZ_SECONDS:-60}
SRC=$abs_top_srcdir
OUT=$abs_top_builddir/tests/fuzz
LOGS=${IOACCT_DARSHAN_LOGS:-$SRC/../shared/darshan-logs}

if [ "${IOACCT_DISTCHECK:-}" = 1 ]; then
	echo "SKIP: IOACCT_DISTCHECK=1 (make distcheck): the fuzzer runs in make check"
	exit 77
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ioacct-fuzz.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"

printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ return (int)(d && n) * 0; }\n' \
	> "$WORK/probe.c"
if ! "$CLANG" -fsanitize=fuzzer,address "$WORK/probe.c" -o "$WORK/probe" 2> "$WORK/probe.log"; then
	echo "SKIP: $CLANG cannot link -fsanitize=fuzzer: no libFuzzer runtime (Debian: apt-get install libclang-rt-dev)"
	sed 's/^/  /' "$WORK/probe.log" | head -5
	exit 77
fi

CFLAGS=(-g -O1 -include "$abs_top_builddir/ioacct-config.h" -I"$SRC/lib/core" -I"$SRC/lib/report" -I"$SRC/lib/darshan" -I"$SRC/bpf"
	-I"$SRC/lib/render" -I"$SRC/tests/unit")
# What the reader, the writer and the renderers need of lib/, and no more (no SQLite, no libbpf).
SOURCES=("$SRC/lib/darshan/darshan.c" "$SRC/lib/darshan/darshan_read.c" "$SRC/lib/darshan/darshan_write.c" "$SRC/lib/darshan/darshan_files.c"
	"$SRC/lib/report/report.c" "$SRC/lib/report/advice.c" "$SRC/lib/report/files.c" "$SRC/lib/report/mpiio.c"
	"$SRC/lib/report/hdf5.c" "$SRC/lib/report/rpc.c" "$SRC/lib/render/render_html_hdf5.c" "$SRC/lib/render/render_html_rpc.c"
	"$SRC/lib/darshan/darshan_mpiio.c" "$SRC/lib/darshan/darshan_hdf5.c" "$SRC/lib/darshan/darshan_heatmap.c"
	"$SRC/lib/core/advice_limits.c" "$SRC/lib/core/model.c"
	"$SRC/lib/core/util.c" "$SRC/lib/core/json.c" "$SRC/lib/core/text.c" "$SRC/lib/core/log.c" "$SRC/lib/render/render_darshan.c"
	"$SRC/lib/render/compare.c" "$SRC/lib/render/render.c" "$SRC/lib/render/render_util.c" "$SRC/lib/render/render_text.c"
	"$SRC/lib/render/render_json.c" "$SRC/lib/render/render_html.c" "$SRC/lib/render/render_html_mpiio.c")
LIBS=(${ZLIB_LIBS:--lz} -lm)

# lib/'s sources are compiled once, two compilers at a time, instrumented for
# the fuzzer (fuzzer-no-link) and the sanitizers: fuzz_darshan links them with
# libFuzzer, mkseed without it (the sanitizers' runtime has the coverage
# hooks), so the seeds are written under AddressSanitizer and UBSan too.
# shellcheck disable=SC2054 # one flag, its list comma-separated
SAN=(-fsanitize=address,undefined -fno-sanitize-recover=undefined)
OBJ=$WORK/obj
mkdir -p "$OBJ"
dup=$(printf '%s\n' "${SOURCES[@]##*/}" | sort | uniq -d)
[ -z "$dup" ] || { echo "FAIL: two sources named $dup: their objects would collide in $OBJ"; exit 1; }
echo "+ compiling ${#SOURCES[@]} sources with $CLANG -fsanitize=fuzzer-no-link,address,undefined"
printf '%s\0' "${SOURCES[@]}" |
	(cd "$OBJ" && xargs -0 -n 6 -P 2 "$CLANG" "${CFLAGS[@]}" -fsanitize=fuzzer-no-link "${SAN[@]}" -c) ||
	{ echo "FAIL: cannot compile the fuzz target's sources"; exit 1; }
OBJS=("$OBJ"/*.o)
[ ${#OBJS[@]} -eq ${#SOURCES[@]} ] || { echo "FAIL: ${#OBJS[@]} objects for ${#SOURCES[@]} sources"; exit 1; }
echo "+ linking tests/fuzz/fuzz_darshan (-fsanitize=fuzzer) and tests/fuzz/mkseed"
"$CLANG" "${CFLAGS[@]}" -fsanitize=fuzzer "${SAN[@]}" -o "$OUT/fuzz_darshan" \
	"$SRC/tests/fuzz/fuzz_darshan.c" "${OBJS[@]}" "${LIBS[@]}" ||
	{ echo "FAIL: cannot build the fuzz target"; exit 1; }
"$CLANG" "${CFLAGS[@]}" "${SAN[@]}" -o "$OUT/mkseed" "$SRC/tests/fuzz/mkseed.c" "${OBJS[@]}" "${LIBS[@]}" ||
	{ echo "FAIL: cannot build mkseed"; exit 1; }

CORPUS=$WORK/corpus
mkdir -p "$CORPUS"
"$OUT/mkseed" "$CORPUS" || { echo "FAIL: mkseed"; exit 1; }
if [ -d "$LOGS" ]; then
	cp "$LOGS"/*.darshan "$CORPUS"/
	chmod u+w "$CORPUS"/*
else
	echo "note: $LOGS not found: seeds are ioacct's own logs only"
fi
echo "seed corpus: $(ls "$CORPUS" | wc -l) logs: $(ls "$CORPUS" | tr '\n' ' ')"

echo "+ fuzz_darshan -max_total_time=$SECS (AddressSanitizer, UBSan, leak checks)"
rc=0
ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
"$OUT/fuzz_darshan" -max_total_time="$SECS" -timeout=25 -rss_limit_mb=2048 \
	-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$OUT/" "$CORPUS" > "$WORK/fuzz.log" 2>&1 || rc=$?
grep -E '^(INFO: Seed|#[0-9]+ +(INITED|DONE))' "$WORK/fuzz.log" | head -3
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$WORK/fuzz.log")
peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$WORK/fuzz.log")
if [ "$rc" != 0 ]; then
	tail -n 60 "$WORK/fuzz.log"
	echo "FAIL: the fuzzer found a problem (exit $rc); inputs kept in $OUT/"
	exit 1
fi
[ -n "$execs" ] && [ "$execs" -gt 0 ] || { tail -n 20 "$WORK/fuzz.log"; echo "FAIL: the fuzzer ran nothing"; exit 1; }
echo "ok: $execs executions in $SECS s, no crash, leak or timeout (peak RSS ${peak:-?} MiB)"
