#!/bin/sh
# heuristics.sh - what each of the library's speed heuristics saves on an
# agent-like session (section 8 of the bench), measured against the library
# as it is in the same run:
#
#   sh bench/heuristics.sh INERT SPIN SPAWN_CLOCK    (make bench-heuristics)
#
# build/bench/shexec_bench is the library as it is; shexec_bench-no-NAME the
# same with one heuristic compiled out (SHX_BENCH_NO_NAME). Each round runs
# every binary once, one round of section 8 each, in an order that turns
# with the round, so a burst of outside load hits all of them. Per binary:
# the median over rounds of its lib / floor ratio (its own floor, measured
# in the same process), persist_env off and on; "vs as is" divides that by
# the library-as-it-is figure. Above 1.00: the heuristic saves that much.
set -eu
dir=$(cd "$(dirname "$0")/../build/bench" && pwd)
rounds=${BENCH_HEURISTIC_ROUNDS:-5}
bins="shexec_bench"
for h in "$@"; do bins="$bins shexec_bench-no-$h"; done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
n=$(echo $bins | wc -w)
r=0
while [ "$r" -lt "$rounds" ]; do
    i=0
    # rotate the order by the round
    for b in $bins $bins; do
        i=$((i + 1))
        [ "$i" -le "$((r % n))" ] && continue
        [ "$i" -gt "$((r % n + n))" ] && break
        line=$(BENCH_PYTHON=none BENCH_NODE=none BENCH_WORKLOAD_ROUNDS=1 "$dir/$b" 8 |
               sed -n 's/.*RESULT \(floor=.*\)/\1/p')
        [ -n "$line" ] || { echo "heuristics: $b printed no result" >&2; exit 1; }
        echo "$b $line" >>"$out"
        printf '.'
    done
    r=$((r + 1))
done
echo
awk '
function med(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    b = $1; split($2, f, "="); split($3, l, "="); split($4, p, "=")
    k = ++cnt[b]; off[b, k] = l[2] / f[2]; on[b, k] = p[2] / f[2]; fl[b, k] = f[2]
    if (!(b in seen)) { seen[b] = 1; order[++nb] = b }
}
END {
    for (i = 1; i <= nb; i++) {
        b = order[i]; n = cnt[b]
        for (k = 1; k <= n; k++) { x[k] = off[b, k]; y[k] = on[b, k]; z[k] = fl[b, k] }
        mo[b] = med(x, n); mp[b] = med(y, n); mf[b] = med(z, n)
    }
    base = order[1]
    printf "%-28s %6s %10s %10s %10s %10s %10s\n", "library", "rounds", "floor s", "lib/floor", "vs as is", "persist on", "vs as is"
    for (i = 1; i <= nb; i++) {
        b = order[i]
        name = b == base ? "as it is" : "without " substr(b, length("shexec_bench-no-") + 1)
        printf "%-28s %6d %10.3f %10.3f %10.3f %10.3f %10.3f\n", name, cnt[b], mf[b], mo[b], mo[b] / mo[base], mp[b], mp[b] / mp[base]
    }
}' "$out"
