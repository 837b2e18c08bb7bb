#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The built man pages render with man(1) as a user reads them: header line
# with name and section, NAME and SYNOPSIS sections, the main options, and no
# Markdown left over (backticks, ## headings, [links]).
set -euo pipefail
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
: "${MAN_PERISCOPE:?}" "${MAN_PERISCOPED:?}"
for tool in man col; do
        command -v "$tool" >/dev/null || fail "$tool missing: apt-get install -y man-db bsdextrautils"
done

render() { MANWIDTH=80 man -l "$1" 2>&1 | col -bx; }

# check_page FILE NAME SECTION OPTION...
check_page() {
        local file=$1 name=$2 section=$3
        shift 3
        [ -s "$file" ] || fail "$file was not built"
        local text
        text=$(render "$file") || fail "man -l $file failed: $text"
        head -n1 <<<"$text" | grep >/dev/null "^$name($section) .* $name($section)\$" ||
                fail "$file: header is not '$name($section) ... $name($section)': $(head -n1 <<<"$text")"
        for s in NAME SYNOPSIS; do
                grep -qx "$s" <<<"$text" || fail "$file: no $s section"
        done
        # NAME holds "name - what it is" on the line after the heading
        grep -A1 -x NAME <<<"$text" | grep >/dev/null -E "^ *$name +- " || fail "$file: NAME is not '$name - ...'"
        grep -A1 -x SYNOPSIS <<<"$text" | grep >/dev/null "^ *$name " || fail "$file: SYNOPSIS does not start with $name"
        for o in "$@"; do
                grep -qe "$o" <<<"$text" || fail "$file: option $o not in the rendered page"
        done
        if grep -nE '`|^ *#+ |\]\(' <<<"$text"; then
                fail "$file: Markdown left in the rendered page (lines above)"
        fi
        echo "ok: $name($section): $(wc -l <<<"$text") lines"
}

check_page "$MAN_PERISCOPE" periscope 1 \
        --output=FILE --frequency=HZ --system --pid=PID --duration=DURATION --unwind=MODE
check_page "$MAN_PERISCOPED" periscoped 8 \
        --system --peer-fd=FD --idle-timeout=SECONDS periscoped.service
