#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# check-format.sh: the C lines added or changed since the commit named in
# .clang-format-baseline are as clang-format writes them (.clang-format).
# Older lines are left as they are: reformatting the whole tree would bury
# its history. Prints clang-format's diff and exits 1 when a line is off.
#   scripts/check-format.sh          what changed since the baseline
#   scripts/check-format.sh COMMIT   what changed since COMMIT
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
printf '%s\n' "$out"
echo "check-format: the lines above differ from clang-format's (run: git clang-format $base)"
exit 1
