# Turns `go test -bench` output into one table: package, benchmark, time per
# op and every custom metric (GFLOP/s, GB/s, tok/s, MB/s, ...) reported
# with b.ReportMetric, in one aligned block.
/^pkg: / { pkg = $2; sub(/^hark\//, "", pkg) }
/^Benchmark/ {
	name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	row = ""
	for (i = 3; i < NF; i += 2) {
		unit = $(i + 1)
		if (unit == "B/op" || unit == "allocs/op") continue
		row = row sprintf("%s %s  ", $i, unit)
	}
	n++; P[n] = pkg; N[n] = name; R[n] = row
	if (length(pkg) > wp) wp = length(pkg)
	if (length(name) > wn) wn = length(name)
}
/^(FAIL|panic:|--- FAIL)/ { fail = fail $0 "\n" }
END {
	if (wp < 7) wp = 7
	if (wn < 9) wn = 9
	printf "%-" wp "s  %-" wn "s  %s\n", "package", "benchmark", "results"
	for (i = 1; i <= n; i++) printf "%-" wp "s  %-" wn "s  %s\n", P[i], N[i], R[i]
	if (fail != "") { printf "\nfailures:\n%s", fail; exit 1 }
}
