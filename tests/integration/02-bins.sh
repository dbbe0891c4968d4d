#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Time bins are computed in the kernel from the job's start: 20 MiB, a pause
# of three bin widths, 30 MiB land in the bins the workload's own clock says,
# and the bins add up exactly to the totals.
. "$(dirname "$0")/lib.sh"
require_root_bpf
setup
start_daemon

F=$T/bins.dat
"$IORUN" --bin-width 1 --json -o "$T/out.json" -- "$IOWORK" \
	tick "$F" 1048576 20 , sleep 3 , tick "$F.2" 1048576 30 | cat > "$T/ticks" ||
	fail "iorun failed"
[ "$(wc -l < "$T/ticks")" = 50 ] || fail "expected 50 tick lines, got $(wc -l < "$T/ticks")"
python3 "$(dirname "$0")/check_bins.py" "$T/ioacct.db" "$T/out.json" "$T/ticks" ||
	fail "time bins differ from the workload's clock"
json_get "$T/out.json" 'sum(m["write_bytes"] for m in j["mounts"])' | grep -qx 52428800 ||
	fail "total write bytes are not 52428800"
# The pause must show as at least two empty bins between the two phases.
python3 - "$T/ioacct.db" <<'PY' || fail "the pause is not visible in the series"
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
bins = [b for (b,) in con.execute("select bin from series where op=1 order by bin")]
gaps = [b2 - b1 for b1, b2 in zip(bins, bins[1:])]
sys.exit(0 if gaps and max(gaps) >= 3 else 1)
PY
ok "bins exact"
