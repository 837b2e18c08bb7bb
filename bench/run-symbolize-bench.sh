#!/usr/bin/env bash
# run-symbolize-bench.sh BUILD [BINARY] [N]: time naming N (default 2000)
# random addresses of BINARY's largest executable segment (default node,
# 99 MB) through the sandboxed helper (helper-tool symbolize: bwrap start,
# IDENTIFY-free SYMBOLIZE batches), with eu-addr2line and addr2line on the
# same addresses as anchors.
set -euo pipefail
build=${1:?usage: run-symbolize-bench.sh BUILD [BINARY] [N]}
bin=${2:-/usr/bin/node}
n=${3:-2000}
tool=$build/tests/sandbox-helper/helper-tool
[ -x "$tool" ] || { echo "build $build first (tests/sandbox-helper/helper-tool)"; exit 1; }
read -r off vaddr size < <(readelf -lW "$bin" | awk '$1 == "LOAD" && / R E | RWE / { print $2, $3, $5 }' |
        while read -r o v s; do echo $((o)) $((v)) $((s)); done | sort -k3 -n | tail -1)
mapfile -t offs < <(python3 -c "
import random; random.seed(1)
for a in sorted(random.sample(range($off, $off + $size), $n)): print(hex(a))")
mapfile -t addrs < <(for o in "${offs[@]}"; do printf '0x%x\n' $((o - off + vaddr)); done)
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s.%N); echo "$e - $s" | bc; }
echo "$n addresses in $bin ($(stat -c %s "$bin") bytes)"
echo "periscope-helper: $(PERISCOPE_HELPER=$build/sandbox-helper/periscope-helper t "$tool" symbolize "$bin" "${offs[@]}") s"
echo "eu-addr2line -f -i: $(t eu-addr2line -f -i -e "$bin" "${addrs[@]}") s"
echo "addr2line -f -i: $(t addr2line -f -i -e "$bin" "${addrs[@]}") s"
