#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The tree keeps the shape docs/design.md ("The map") gives it: scripts/check-layout
# over the sources and the objects this build made (file sizes, long functions, which
# room may use which, no two files that use each other). One line per breach.
set -uo pipefail
srcdir=${abs_top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${abs_top_builddir:-$srcdir/build}
command -v python3 >/dev/null || { echo "SKIP: no python3 to run scripts/check-layout"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: no nm (binutils) to read the objects"; exit 77; }
[ -f "$builddir/lib/.libs/libioacct.a" ] || [ -f "$builddir/lib/libioacct.la" ] ||
	{ echo "SKIP: lib/ is not built in $builddir"; exit 77; }
python3 "$srcdir/scripts/check-layout" --srcdir "$srcdir" --builddir "$builddir" --verbose
