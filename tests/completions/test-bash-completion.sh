#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The bash completion (completions/periscope.bash) as bash runs it: the
# function `complete -p periscope` names, called with COMP_WORDS and
# COMP_CWORD as bash sets them for a command line. It completes the
# commands, every long option each command's --help lists (so an option
# added to a table is covered, or this fails), record's options by prefix,
# PIDs after --pid, commands after "--", and --container from `periscope
# list` (a private periscoped, an imitated Flatpak sandbox).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh"
. "$here/lib.sh"
completion_test bash
test_tmpdir

# complete WORDS…: what the completion offers for the command line WORDS
# (the last word is the one being completed), one a line
complete_line() {
        local keep=()
        [ -z "${DBUS_SYSTEM_BUS_ADDRESS:-}" ] ||
                keep=(DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" XDG_STATE_HOME="$XDG_STATE_HOME" PERISCOPED="$PERISCOPED")
        env -i PATH="$PATH" "${keep[@]}" bash --norc --noprofile -c '
                set -u
                . "$1"
                shift
                spec=$(complete -p periscope) || { echo "no completion for periscope" >&2; exit 1; }
                func=$(sed -n -E "s/.*-F ([^ ]+).*/\1/p" <<<"$spec")
                [ -n "$func" ] || { echo "complete -p: $spec" >&2; exit 1; }
                COMP_WORDS=("$@")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
                COMP_LINE="$*"
                COMP_POINT=${#COMP_LINE}
                COMPREPLY=()
                "$func" periscope "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                printf "%s\n" "${COMPREPLY[@]}"' complete-test "$COMPLETION" "$@"
}

got=$(complete_line "$PERISCOPE" "" | sort | paste -sd' ')
[ "$got" = "--help dump export info list record report symbolize" ] || fail "commands: '$got'"
got=$(complete_line "$PERISCOPE" rep)
[ "$got" = report ] || fail "'periscope rep' gave '$got'"
echo "ok: commands"

# every long option of every command, as its --help lists it
n=0
for cmd in record list info dump report export symbolize; do
        mapfile -t want < <("$PERISCOPE" "$cmd" --help | grep -oE '^ +(-[[:alnum:]], )?--[[:alnum:]-]+' | grep -oE -- '--[[:alnum:]-]+')
        [ ${#want[@]} -gt 1 ] || fail "periscope $cmd --help lists ${#want[@]} options"
        offered=$(complete_line "$PERISCOPE" "$cmd" --)
        for o in "${want[@]}"; do
                grep -qxE -- "$o=?" <<<"$offered" || fail "'periscope $cmd --<TAB>' does not offer $o (offered: $(paste -sd' ' <<<"$offered"))"
                n=$((n + 1))
        done
done
echo "ok: all $n long options of the 7 commands offered"

record=$(complete_line "$PERISCOPE" record --)
for o in --output= --frequency= --system --pid= --container= --duration= --no-kernel --unwind= --off-cpu --memory; do
        grep -qx -- "$o" <<<"$record" || fail "record: $o not offered"
done
[ "$(grep -c . <<<"$record")" -ge 20 ] || fail "record offers only $(grep -c . <<<"$record") options"
got=$(complete_line "$PERISCOPE" record --freq)
[ "$got" = --frequency= ] || fail "'record --freq' gave '$got'"
got=$(complete_line "$PERISCOPE" record -o out.syscap --off)
[ "$(paste -sd' ' <<<"$got")" = "--off-cpu --off-cpu-min=" ] || fail "'record -o out.syscap --off' gave '$got'"
echo "ok: record's options"

sleep 60 &
sleeper=$!
at_exit kill "$sleeper"
complete_line "$PERISCOPE" record --pid "" | grep >/dev/null -x "$sleeper" || fail "'record --pid <TAB>' does not offer pid $sleeper"
complete_line "$PERISCOPE" record "--pid=$sleeper" | grep >/dev/null -x -- "--pid=$sleeper" || fail "'record --pid=$sleeper<TAB>' lost it"
got=$(complete_line "$PERISCOPE" record -- ech)
grep -qx echo <<<"$got" || fail "'record -- ech' does not offer echo: '$got'"
echo "ok: PIDs after --pid, commands after --"

fake_flatpak_app org.example.BashApp
complete_line "$PERISCOPE" record --container "" | grep >/dev/null -x org.example.BashApp ||
        fail "'record --container <TAB>' does not offer the app: $(complete_line "$PERISCOPE" record --container "")"
complete_line "$PERISCOPE" record -c org.ex | grep >/dev/null -x org.example.BashApp || fail "'record -c org.ex<TAB>' does not complete the app"
got=$(complete_line "$PERISCOPE" record --container=org.ex)
[ "$got" = --container=org.example.BashApp ] || fail "'record --container=org.ex<TAB>' gave '$got'"
echo "ok: --container from periscope list"
