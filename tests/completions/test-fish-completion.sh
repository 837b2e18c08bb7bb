#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The fish completion (completions/periscope.fish) as fish loads it: from a
# directory in $fish_complete_path, at the first `complete -C` of a
# periscope command line (what Tab runs). It completes the commands, every
# long option each command's --help lists (an option added to a table is
# covered, or this fails) and the short ones, PIDs after --pid, captures as
# file arguments, commands after record's "--", and --container from
# `periscope list` (a private periscoped, an imitated Flatpak sandbox).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh"
. "$here/lib.sh"
completion_test fish
test_tmpdir

fish --no-execute "$COMPLETION" || fail "fish cannot parse $COMPLETION"
mkdir "$TEST_TMP/completions" "$TEST_TMP/bin" "$TEST_TMP/work" "$TEST_TMP/work/dir"
cp "$COMPLETION" "$TEST_TMP/completions/periscope.fish"
ln -s "$(readlink -f "$PERISCOPE")" "$TEST_TMP/bin/periscope"

# complete LINE: what fish offers for LINE, "candidate<TAB>description"
# one a line
complete_line() {
        (cd "$TEST_TMP/work" && env PATH="$TEST_TMP/bin:$PATH" HOME="$TEST_TMP" XDG_CONFIG_HOME="$TEST_TMP/config" \
                fish --no-config -c 'set fish_complete_path $argv[1]; complete -C $argv[2]' \
                "$TEST_TMP/completions" "$1")
}
candidates() { complete_line "$1" | cut -f1; }

got=$(candidates "periscope " | sort | paste -sd' ')
[ "$got" = "dump export info list record report symbolize" ] || fail "commands: '$got'"
got=$(candidates "periscope rep")
[ "$got" = report ] || fail "'periscope rep' gave '$got'"
got=$(candidates "periscope --" | sort | paste -sd' ')
[ "$got" = "--help --version" ] || fail "'periscope --' gave '$got'"
echo "ok: commands"

n=0
for cmd in record list info dump report export symbolize; do
        mapfile -t want < <("$PERISCOPE" "$cmd" --help | grep -oE '^ +(-[[:alnum:]], )?--[[:alnum:]-]+' | grep -oE -- '--[[:alnum:]-]+')
        mapfile -t short < <("$PERISCOPE" "$cmd" --help | grep -oE '^ +-[[:alnum:]], ' | grep -oE -- '-[[:alnum:]]')
        [ ${#want[@]} -gt 1 ] || fail "periscope $cmd --help lists ${#want[@]} options"
        offered=$(candidates "periscope $cmd --")
        for o in "${want[@]}"; do
                grep -qx -- "$o" <<<"$offered" || fail "'periscope $cmd --<TAB>' does not offer $o (offered: $(paste -sd' ' <<<"$offered"))"
                n=$((n + 1))
        done
        offered=$(candidates "periscope $cmd -")
        for o in "${short[@]}"; do
                grep -qx -- "$o" <<<"$offered" || fail "'periscope $cmd -<TAB>' does not offer $o"
        done
done
echo "ok: all $n long options of the 7 commands offered, and their short names"

got=$(candidates "periscope record --freq")
[ "$got" = --frequency ] || fail "'record --freq' gave '$got'"
got=$(candidates "periscope record -o out.syscap --off" | paste -sd' ')
[ "$got" = "--off-cpu --off-cpu-min" ] || fail "'record -o out.syscap --off' gave '$got'"
complete_line "periscope report --by-p" | grep >/dev/null -xE -- $'--by-process\t.+' || fail "report --by-process has no description"
echo "ok: option prefixes, with descriptions"

sleep 60 &
sleeper=$!
at_exit kill "$sleeper"
complete_line "periscope record --pid " | grep >/dev/null -x "$sleeper"$'\tsleep' || fail "'record --pid <TAB>' does not offer pid $sleeper"
candidates "periscope record -p $sleeper" | grep >/dev/null -x "$sleeper" || fail "'record -p $sleeper<TAB>' lost it"
candidates "periscope record --pid=$sleeper" | grep >/dev/null -x -- "--pid=$sleeper" || fail "'record --pid=$sleeper<TAB>' lost it"
echo "ok: PIDs after --pid"

touch "$TEST_TMP/work/run.syscap" "$TEST_TMP/work/notes.txt"
got=$(candidates "periscope report " | sort | paste -sd' ')
[ "$got" = "dir/ run.syscap" ] || fail "'periscope report <TAB>' gave '$got'"
candidates "periscope record -o " | grep >/dev/null -x notes.txt || fail "'record -o <TAB>' does not complete files"
[ -z "$(candidates "periscope record ")" ] || fail "'periscope record <TAB>' offers files: $(candidates "periscope record ")"
got=$(candidates "periscope record -- ech")
grep -qx echo <<<"$got" || fail "'record -- ech' does not offer echo: '$got'"
got=$(candidates "periscope record -o x -- sleep --")
! grep -qx -- --frequency <<<"$got" || fail "after '--' record's options are offered: $got"
echo "ok: captures, files after -o, commands after --"

fake_flatpak_app org.example.FishApp
got=$(complete_line "periscope record --container ")
grep >/dev/null -xE $'org\\.example\\.FishApp\tflatpak .*' <<<"$got" || fail "'record --container <TAB>' does not offer the app: '$got'"
candidates "periscope record -c org.ex" | grep >/dev/null -x org.example.FishApp || fail "'record -c org.ex<TAB>' does not complete the app"
echo "ok: --container from periscope list"
