# SPDX-License-Identifier: GPL-2.0-or-later
# Compares iorun's --json summary with exact expectations, in any awk
# (busybox awk inside the test VM has no python).
#
#   awk -f check.awk SUMMARY.json EXPECT
#
# EXPECT has one line per mount: its mount point, then KEY=VALUE words,
#   /mnt/a write_bytes=104857600 writes=100 op_errors.opens=5 write_sizes.100K_1M=100
# and optionally one line "@ KEY=VALUE..." for top-level fields (probe_mode=...).
# The rules are those of tests/integration/check_mounts.py, a little stricter:
#  - every counter of a named mount that is not named must be 0 (the counts,
#    every size-histogram bin, every per-operation error count and every
#    error class);
#  - a named key the summary does not have is an error (no silent typo);
#  - mounts not named must not appear; "dropped" must be 0.
# Prints "MISMATCH: ..." for every difference and exits 1 if there is any;
# otherwise prints "OK probe_mode=M totals=MOUNT:wb=..,rb=..,ops=..,err=..;..."
# (ops: reads + writes + opens + creates + mkdirs + unlinks + rmdirs + fsyncs +
# renames + stats). Exits 2 when the summary is not JSON it can read.

function fatal(msg) {
	print "MISMATCH: the summary " ARGV[1] ": " msg
	bad_json = 1
	exit 2
}

function skipws() {
	while (pos <= n && index(" \t\r\n", substr(js, pos, 1)))
		pos++
}

function pstring(   c, out) {
	if (substr(js, pos, 1) != "\"")
		fatal("string expected at offset " pos)
	pos++
	out = ""
	while (pos <= n) {
		c = substr(js, pos, 1)
		if (c == "\\") {
			out = out substr(js, pos, 2)
			pos += 2
			continue
		}
		pos++
		if (c == "\"")
			return out
		out = out c
	}
	fatal("unterminated string")
}

# Flattens the value at pos into flat["a.b.0.c"] = scalar.
function pvalue(path,   c, k, i, tok) {
	skipws()
	c = substr(js, pos, 1)
	if (c == "{" || c == "[") {
		pos++
		skipws()
		if (substr(js, pos, 1) == (c == "{" ? "}" : "]")) {
			pos++
			return
		}
		for (i = 0; ; i++) {
			skipws()
			if (c == "{") {
				k = pstring()
				skipws()
				if (substr(js, pos, 1) != ":")
					fatal("':' expected at offset " pos)
				pos++
			} else {
				k = i
			}
			pvalue(path == "" ? k : path "." k)
			skipws()
			tok = substr(js, pos, 1)
			pos++
			if (tok == (c == "{" ? "}" : "]"))
				return
			if (tok != ",")
				fatal("',' expected at offset " (pos - 1))
		}
	}
	if (c == "\"") {
		flat[path] = pstring()
		return
	}
	tok = ""
	while (pos <= n && index(",}] \t\r\n", substr(js, pos, 1)) == 0) {
		tok = tok substr(js, pos, 1)
		pos++
	}
	if (tok == "")
		fatal("value expected at offset " pos)
	flat[path] = tok
}

function mismatch(msg) {
	print "MISMATCH: " msg
	nbad++
}

FILENAME == ARGV[1] {
	js = js $0 "\n"
	next
}

FILENAME == ARGV[2] && NF > 0 && $1 !~ /^#/ {
	if ($1 == "@") {
		for (i = 2; i <= NF; i++) {
			eq = index($i, "=")
			top[substr($i, 1, eq - 1)] = substr($i, eq + 1)
		}
		next
	}
	want[$1] = 1
	order[++nwant] = $1
	for (i = 2; i <= NF; i++) {
		eq = index($i, "=")
		expv[$1, substr($i, 1, eq - 1)] = substr($i, eq + 1)
		named[$1, ++nnamed[$1]] = substr($i, 1, eq - 1)
	}
}

END {
	if (bad_json)
		exit 2
	n = length(js)
	pos = 1
	pvalue("")
	skipws()
	if (pos <= n)
		fatal("trailing data at offset " pos)
	if (!(("mounts.0.mount") in flat) && !(("dropped") in flat))
		fatal("no \"mounts\" in the summary")

	ncounts = split("read_bytes write_bytes reads writes opens creates mkdirs unlinks rmdirs fsyncs renames stats errors real_errors", counts, " ")
	for (i = 0; ("mounts." i ".mount") in flat; i++)
		idx[flat["mounts." i ".mount"]] = i

	for (w = 1; w <= nwant; w++) {
		m = order[w]
		if (!(m in idx)) {
			got = ""
			for (x in idx)
				got = got " " x
			mismatch("mount " m ": missing (got" got ")")
			continue
		}
		p = "mounts." idx[m] "."
		# Every named key must exist.
		for (j = 1; j <= nnamed[m]; j++)
			if (!((p named[m, j]) in flat))
				mismatch("mount " m ": the summary has no field " named[m, j])
		# Counts, named or 0.
		for (j = 1; j <= ncounts; j++) {
			k = counts[j]
			e = ((m, k) in expv) ? expv[m, k] : 0
			if (!((p k) in flat))
				mismatch("mount " m ": the summary has no field " k)
			else if (flat[p k] "" != e "")
				mismatch("mount " m ": " k " = " flat[p k] ", expected " e)
		}
		# Every size bin, per-operation error count and error class, named or 0.
		for (key in flat) {
			if (index(key, p) != 1)
				continue
			k = substr(key, length(p) + 1)
			if (k !~ /^(read_sizes|write_sizes|op_errors|error_classes)\./)
				continue
			e = ((m, k) in expv) ? expv[m, k] : 0
			if (flat[key] "" != e "")
				mismatch("mount " m ": " k " = " flat[key] ", expected " e)
		}
	}
	for (x in idx)
		if (!(x in want))
			mismatch("mount " x ": unexpected (write_bytes " flat["mounts." idx[x] ".write_bytes"] \
				 ", read_bytes " flat["mounts." idx[x] ".read_bytes"] ", opens " flat["mounts." idx[x] ".opens"] ")")
	if (!("dropped" in top))
		top["dropped"] = 0
	for (k in top) {
		if (!(k in flat))
			mismatch("the summary has no field " k)
		else if (flat[k] "" != top[k] "")
			mismatch(k " = " flat[k] ", expected " top[k])
	}
	if (nbad)
		exit 1

	out = ""
	for (w = 1; w <= nwant; w++) {
		p = "mounts." idx[order[w]] "."
		ops = 0
		for (j = 3; j <= 12; j++)
			ops += flat[p counts[j]]
		out = out (w > 1 ? ";" : "") order[w] ":wb=" flat[p "write_bytes"] ",rb=" flat[p "read_bytes"] \
		      ",ops=" ops ",err=" flat[p "errors"]
	}
	print "OK probe_mode=" flat["probe_mode"] " totals=" out
	exit 0
}
