#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-format.sh: the C lines added or changed since the commit named in
# .clang-format-baseline are as clang-format writes them (.clang-format).
# Older lines are left as they are: reformatting the whole tree would bury
# its history. Prints clang-format's diff and exits 1 when a line is off.
#   scripts/check-format.sh          what changed since the baseline
#   scripts/check-format.sh COMMIT   what changed since COMMIT
# clang-format 14 (Debian 12's) cannot keep the house's space before a
# compound literal's brace, `(Node) { .x = 1 }`: a hunk whose only
# difference is that space is not reported.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v git-clang-format >/dev/null || { echo "git-clang-format is missing: apt-get install -y clang-format"; exit 1; }
base=${1:-$(cat .clang-format-baseline)}
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
        # a shallow clone: only HEAD's own change can be checked
        echo "check-format: $base is not in this clone's history (shallow?); checking HEAD's own change"
        if git cat-file -e 'HEAD^{commit}' 2>/dev/null && git cat-file -e 'HEAD^^{commit}' 2>/dev/null; then
                base=HEAD^
        else
                base=HEAD
        fi
fi
out=$(git clang-format --diff --extensions c,h "$base" 2>&1) || true
case $out in
"" | "no modified files to format" | "clang-format did not modify any files")
        echo "check-format: C lines changed since $(git rev-parse --short "$base") are formatted"
        exit 0 ;;
esac
# keep the hunks that differ in more than the compound literals' space
real=$(python3 -c '
import re, sys
text = sys.stdin.read()
norm = lambda l: re.sub(r"\)\s*\{", "){", l[1:]).rstrip()
out, head, hunk = [], None, []
def flush():
    if hunk and [norm(l) for l in hunk if l[:1] == "-"] != [norm(l) for l in hunk if l[:1] == "+"]:
        out.extend([head] + hunk)
for line in text.splitlines():
    if line.startswith("@@") or line.startswith("diff ") or line.startswith("--- ") or line.startswith("+++ "):
        flush(); hunk = []
        head = line
        if not line.startswith("@@"):
            out.append(line)
        continue
    hunk.append(line)
flush()
print("\n".join(l for l in out if l is not None))
' <<<"$out" | grep -E '^[-+@]' | grep -vE '^(---|\+\+\+) ' || true)
if [ -z "$(grep '^@@' <<<"$real" || true)" ]; then
        echo "check-format: C lines changed since $(git rev-parse --short "$base") are formatted (but for the compound literals' space)"
        exit 0
fi
printf '%s\n' "$out"
echo "check-format: the lines above differ from clang-format's (run: git clang-format $base)"
exit 1
