# SPDX-License-Identifier: GPL-2.0-or-later
# Compares iorun's --json summary with exact expectations, in any awk
# (busybox awk inside the test VM has no python).
#
#   awk -f check.awk SUMMARY.json EXPECT
#
# EXPECT has one line per mount: its mount point, then KEY=VALUE words,
#   /mnt/a write_bytes=104857600 writes=100 op_errors.opens=5 write_sizes.100K_1M=100
# and optionally one line "@ KEY=VALUE..." for top-level fields (probe_mode=...,
# views=...; "@ _others_allowed=1" lets mounts not named appear). A mount's
# KEY>=VALUE or KEY<=VALUE bounds a count instead (mmap_read_bytes>=1048576).
# A line "file:PATH KEY=VALUE..." expects the per-file records of PATH
# (issue 26; "files" in the summary), each KEY summed over its records
# (ranks, steps): file:/mnt/u/big mmap_bytes=4194304. And whenever the
# summary has records, those of each named mount sum to its mmap_read_bytes
# and cache_miss_bytes (null where the mount's is: not measured).
# The rules are those of tests/integration/check_mounts.py, a little stricter:
#  - every counter of a named mount that is not named must be 0 (the counts,
#    every size-histogram bin, every per-operation error count and every
#    error class);
#  - a named key the summary does not have is an error (no silent typo);
#  - mounts not named must not appear; "dropped" must be 0.
# Prints "MISMATCH: ..." for every difference, then "SEEN k=v,..." (the
# non-zero counts of the views on the named mounts), and exits 1 if there is
# any difference; otherwise prints "OK probe_mode=M totals=MOUNT:wb=..,rb=..,ops=..,err=..;..."
# (ops: reads + writes + opens + creates + mkdirs + unlinks + rmdirs + fsyncs +
# renames + stats). Exits 2 when the summary is not JSON it can read.

function fatal(msg) {
	print "MISMATCH: the summary " ARGV[1] ": " msg
	bad_json = 1
	exit 2
}

# The summary is parsed through a window of its lines (jl[1..jlines]): js
# holds a few hundred characters from the parser's position on, refilled as
# it moves (fill, ch), and jbase counts those dropped before. busybox awk's
# substr() measures its whole string at each call: on the whole summary
# (150 KB with its per-file records) the check took 34 s here and 75 s in
# the VM, most of a mode's time there (issue 35).
function fill() {
	if (pos + 128 <= n || jnext > jlines)
		return
	jbase += pos - 1
	js = substr(js, pos)
	pos = 1
	while (length(js) < 512 && jnext <= jlines)
		js = js jl[jnext++] "\n"
	n = length(js)
}

# The character at pos ("" at the end).
function ch() {
	fill()
	return substr(js, pos, 1)
}

function skipws(   c) {
	while ((c = ch()) != "" && index(" \t\r\n", c))
		pos++
}

function pstring(   c, out) {
	if (ch() != "\"")
		fatal("string expected at offset " (jbase + pos))
	pos++
	out = ""
	while ((c = ch()) != "") {
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
	c = ch()
	if (c == "{" || c == "[") {
		pos++
		skipws()
		if (ch() == (c == "{" ? "}" : "]")) {
			pos++
			return
		}
		for (i = 0; ; i++) {
			skipws()
			if (c == "{") {
				k = pstring()
				skipws()
				if (ch() != ":")
					fatal("':' expected at offset " (jbase + pos))
				pos++
			} else {
				k = i
			}
			pvalue(path == "" ? k : path "." k)
			skipws()
			tok = ch()
			pos++
			if (tok == (c == "{" ? "}" : "]"))
				return
			if (tok != ",")
				fatal("',' expected at offset " (jbase + pos - 1))
			# A comma before the end: a section slim.awk left out was last.
			skipws()
			if (ch() == (c == "{" ? "}" : "]")) {
				pos++
				return
			}
		}
	}
	if (c == "\"") {
		flat[path] = pstring()
		return
	}
	tok = ""
	while ((c = ch()) != "" && index(",}] \t\r\n", c) == 0) {
		tok = tok c
		pos++
	}
	if (tok == "")
		fatal("value expected at offset " (jbase + pos))
	flat[path] = tok
}

# Splits a KEY=VALUE, KEY>=VALUE or KEY<=VALUE word into kv_key, kv_op, kv_val.
function split_kv(word) {
	if (!match(word, /[<>]?=/)) {
		kv_key = word
		kv_op = "="
		kv_val = ""
		return
	}
	kv_key = substr(word, 1, RSTART - 1)
	kv_op = substr(word, RSTART, RLENGTH)
	kv_val = substr(word, RSTART + RLENGTH)
}

# Whether a count got meets the expectation of (mount m, key k): 0 when none.
function meets(got, m, k,   op, e) {
	e = ((m, k) in expv) ? expv[m, k] : 0
	op = ((m, k) in expop) ? expop[m, k] : "="
	if (op == ">=")
		return got + 0 >= e + 0
	if (op == "<=")
		return got + 0 <= e + 0
	return got "" == e ""
}

function expected(m, k) {
	return (((m, k) in expop) && expop[m, k] != "=" ? expop[m, k] " " : "") (((m, k) in expv) ? expv[m, k] : 0)
}

function mismatch(msg) {
	print "MISMATCH: " msg
	nbad++
}

FILENAME == ARGV[1] {
	jl[++jlines] = $0
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
	if ($1 ~ /^file:/) {
		fp = substr($1, 6)
		fwant[fp] = 1
		forder[++nfwant] = fp
		for (i = 2; i <= NF; i++) {
			split_kv($i)
			fexpv[fp, kv_key] = kv_val
			fnamed[fp, ++nfnamed[fp]] = kv_key
		}
		next
	}
	want[$1] = 1
	order[++nwant] = $1
	for (i = 2; i <= NF; i++) {
		split_kv($i)
		expv[$1, kv_key] = kv_val
		expop[$1, kv_key] = kv_op
		named[$1, ++nnamed[$1]] = kv_key
	}
}

# The per-file records: the "file:" lines' sums, and each named mount's
# mmap and miss bytes the sum of its records'.
function file_checks(   i, r, fp, fm, j, k, w, m, p, nv, vk, mk, mv) {
	if (!("files.0.path" in flat)) {
		for (w = 1; w <= nfwant; w++)
			mismatch("file " forder[w] ": no per-file record (files: " \
				 (("files" in flat) ? flat["files"] : "none") ")")
		return
	}
	nv = split("mmap_bytes cache_miss_bytes", vk, " ")
	split("mmap_read_bytes cache_miss_bytes", mk, " ")
	for (i = 0; ("files." i ".path") in flat; i++) {
		r = "files." i "."
		fp = flat[r "path"]
		fm = flat[r "mount"]
		if (fp in fwant) {
			nrec[fp]++
			for (j = 1; j <= nfnamed[fp]; j++) {
				k = fnamed[fp, j]
				if (!((r k) in flat))
					mismatch("file " fp ": its record has no field " k)
				else
					fsum[fp, k] = (fsum[fp, k] == "null" || flat[r k] == "null") ? \
						"null" : fsum[fp, k] + flat[r k]
			}
		}
		for (j = 1; j <= nv; j++) {
			if (!((r vk[j]) in flat))
				mismatch("file " fp ": its record has no field " vk[j])
			else if (flat[r vk[j]] == "null")
				mnull[fm, vk[j]] = 1
			else
				msum[fm, vk[j]] += flat[r vk[j]]
		}
	}
	for (w = 1; w <= nfwant; w++) {
		fp = forder[w]
		if (!nrec[fp]) {
			mismatch("file " fp ": no per-file record")
			continue
		}
		for (j = 1; j <= nfnamed[fp]; j++) {
			k = fnamed[fp, j]
			if (fsum[fp, k] "" != fexpv[fp, k] "")
				mismatch("file " fp ": " k " = " fsum[fp, k] ", expected " fexpv[fp, k])
		}
	}
	for (w = 1; w <= nwant; w++) {
		m = order[w]
		if (!(m in idx))
			continue
		p = "mounts." idx[m] "."
		for (j = 1; j <= nv; j++) {
			mv = ((p mk[j]) in flat) ? flat[p mk[j]] : "null"
			if (mv == "null" && (msum[m, vk[j]] + 0 != 0))
				mismatch("mount " m ": its files' " vk[j] " sum to " msum[m, vk[j]] \
					 ", the mount's " mk[j] " is null")
			else if (mv != "null" && mv + 0 != 0 && ((m, vk[j]) in mnull))
				mismatch("mount " m ": a file's " vk[j] " is null, the mount's " mk[j] \
					 " is " mv)
			else if (mv != "null" && msum[m, vk[j]] + 0 != mv + 0)
				mismatch("mount " m ": its files' " vk[j] " sum to " msum[m, vk[j]] + 0 \
					 ", the mount's " mk[j] " is " mv)
		}
	}
}

END {
	if (bad_json)
		exit 2
	jnext = 1
	pos = 1
	pvalue("")
	skipws()
	if (ch() != "")
		fatal("trailing data at offset " (jbase + pos))
	if (!(("mounts.0.mount") in flat) && !(("dropped") in flat))
		fatal("no \"mounts\" in the summary")

	ncounts = split("read_bytes write_bytes reads writes opens creates mkdirs unlinks rmdirs fsyncs renames stats errors real_errors", counts, " ")
	for (j = 1; j <= ncounts; j++)
		is_count[counts[j]] = 1
	others_allowed = ("_others_allowed" in top)
	delete top["_others_allowed"]
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
		# Every named key must exist; those of the views (cache_miss_bytes,
		# io_uring_ops, ...), neither counts nor bins, are checked here.
		for (j = 1; j <= nnamed[m]; j++) {
			k = named[m, j]
			if (!((p k) in flat))
				mismatch("mount " m ": the summary has no field " k)
			else if (!(k in is_count) && k !~ /^(read_sizes|write_sizes|op_errors|error_classes)\./ &&
				 !meets(flat[p k], m, k))
				mismatch("mount " m ": " k " = " flat[p k] ", expected " expected(m, k))
		}
		# Counts, named or 0.
		for (j = 1; j <= ncounts; j++) {
			k = counts[j]
			if (!((p k) in flat))
				mismatch("mount " m ": the summary has no field " k)
			else if (!meets(flat[p k], m, k))
				mismatch("mount " m ": " k " = " flat[p k] ", expected " expected(m, k))
		}
		# Every size bin, per-operation error count and error class, named or 0.
		for (key in flat) {
			if (index(key, p) != 1)
				continue
			k = substr(key, length(p) + 1)
			if (k !~ /^(read_sizes|write_sizes|op_errors|error_classes)\./)
				continue
			if (!meets(flat[key], m, k))
				mismatch("mount " m ": " k " = " flat[key] ", expected " expected(m, k))
		}
	}
	file_checks()
	for (x in idx)
		if (!(x in want) && !others_allowed)
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
	# What the views counted on the named mounts, for the record.
	nviews = split("cache_miss_bytes cache_fills readahead_bytes readahead_sync readahead_async mmap_faults mmap_read_bytes io_uring_ops", vf, " ")
	out = ""
	for (w = 1; w <= nwant; w++) {
		if (!(order[w] in idx))
			continue
		p = "mounts." idx[order[w]] "."
		for (j = 1; j <= nviews; j++)
			if ((p vf[j]) in flat && flat[p vf[j]] + 0 != 0)
				out = out (out == "" ? "" : ",") vf[j] "=" flat[p vf[j]]
	}
	print "SEEN " (out == "" ? "-" : out)
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
