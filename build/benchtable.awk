# Turns `go test -bench` output into one table: package, benchmark, time per
# op and every custom metric (GFLOP/s, GB/s, tok/s, MB/s, ...) reported
# with b.ReportMetric, in one aligned block.
#
# The ceilings (mlx/kernels' BenchmarkCeiling*: memory read bandwidth,
# sgemm, int8 dot) are measured in the same run, and every row's GB/s,
# GFLOP/s and GOP/s is also given as a share of its ceiling: on a shared
# machine only such ratios within one run mean anything.
/^pkg: / { pkg = $2; sub(/^hark\//, "", pkg) }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	row = ""
	for (i = 3; i < NF; i += 2) {
		unit = $(i + 1)
		if (unit == "B/op" || unit == "allocs/op") continue
		row = row sprintf("%s %s  ", $i, unit)
		M[n + 1, unit] = $i
	}
	if (name == "CeilingReadBandwidth") ceil["GB/s"] = M[n + 1, "GB/s"]
	if (name == "CeilingSgemm") ceil["GFLOP/s"] = M[n + 1, "GFLOP/s"]
	if (name == "CeilingInt8Dot") ceil["GOP/s"] = M[n + 1, "GOP/s"]
	if (name == "CeilingAMXBF16") amx = M[n + 1, "GFLOP/s"]
	n++; P[n] = pkg; N[n] = name; R[n] = row
	if (length(pkg) > wp) wp = length(pkg)
	if (length(name) > wn) wn = length(name)
}
/^(FAIL|panic:|--- FAIL)/ { fail = fail $0 "\n" }
END {
	if (wp < 7) wp = 7
	if (wn < 9) wn = 9
	split("GB/s GFLOP/s GOP/s", units, " ")
	label["GB/s"] = "read"; label["GFLOP/s"] = "sgemm"; label["GOP/s"] = "int8"
	line = ""
	for (u = 1; u <= 3; u++) if (units[u] in ceil) line = line sprintf("%s %s %s  ", label[units[u]], ceil[units[u]], units[u])
	if (amx != "") line = line sprintf("amx-bf16 %s GFLOP/s  ", amx)
	if (line != "") printf "ceilings, this run: %s\n\n", line
	printf "%-" wp "s  %-" wn "s  %s\n", "package", "benchmark", "results"
	for (i = 1; i <= n; i++) {
		share = ""
		if (N[i] !~ /^Ceiling/)
			for (u = 1; u <= 3; u++) {
				c = units[u]
				if ((c in ceil) && ceil[c] > 0 && ((i, c) in M))
					share = share sprintf("(%.0f%% of %s ceiling)  ", 100 * M[i, c] / ceil[c], label[c])
			}
		printf "%-" wp "s  %-" wn "s  %s%s\n", P[i], N[i], R[i], share
	}
	if (fail != "") { printf "\nfailures:\n%s", fail; exit 1 }
}
