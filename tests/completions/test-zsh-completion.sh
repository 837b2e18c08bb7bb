#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The zsh completion (completions/_periscope): zsh parses it, and the
# _arguments specs it builds for each command cover every long option that
# command's --help lists (an option added to a table is covered, or this
# fails), with the value's action where there is one (PIDs, files); and
# an interactive zsh on a pty completes two option prefixes with them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/test-lib.sh"
. "$here/lib.sh"
completion_test zsh

zsh -n "$COMPLETION" || fail "zsh cannot parse $COMPLETION"
head -n1 "$COMPLETION" | grep >/dev/null -x '#compdef periscope' || fail "$COMPLETION lacks its #compdef line"

specs() { # command
        env -i PATH="$PATH" zsh -f -c '_periscope() { :; }; source "$1" 2>/dev/null; _periscope_specs "$2" "$3"' \
                zsh-test "$COMPLETION" "$PERISCOPE" "$1"
}
got=$(env -i PATH="$PATH" zsh -f -c '_periscope() { :; }; source "$1" 2>/dev/null; _periscope_commands "$2"' zsh-test \
        "$COMPLETION" "$PERISCOPE" | cut -d: -f1 | sort | paste -sd' ')
[ "$got" = "dump export info list record report symbolize" ] || fail "commands: '$got'"

n=0
for cmd in record list info dump report export symbolize; do
        s=$(specs "$cmd")
        mapfile -t want < <("$PERISCOPE" "$cmd" --help | grep -oE '^ +(-[[:alnum:]], )?--[[:alnum:]-]+' | grep -oE -- '--[[:alnum:]-]+')
        for o in "${want[@]}"; do
                grep -qE -- "^(\([^)]*\))?$o(=)?\[[^]]+\]" <<<"$s" || fail "zsh specs of $cmd lack $o: $s"
                n=$((n + 1))
        done
done
s=$(specs record)
grep -qE '^\(-p --pid\)--pid=\[Record process PID.*\]:PID:_pids$' <<<"$s" || fail "record --pid does not complete PIDs: $s"
grep -qE '^\(-o --output\)-o\+\[.*\]:FILE:_files$' <<<"$s" || fail "record -o does not complete files: $s"
grep -qE '^--system\[' <<<"$s" || fail "record --system is not a flag: $s"
grep -qE '^\(-c --container\)--container=\[.*\]:.*:_periscope_containers$' <<<"$s" ||
        fail "record --container does not complete from periscope list: $s"
echo "ok: zsh specs cover all $n long options of the 7 commands"

# And as zsh's completion system runs it: an interactive zsh on a pty
# (zsh/zpty) with compinit, Tab after a prefix.
test_tmpdir
cp "$COMPLETION" "$TEST_TMP/_periscope"
ln -s "$(readlink -f "$PERISCOPE")" "$TEST_TMP/periscope"
screen=$(env -i PATH="$PATH" TERM=dumb timeout 60 zsh -f -c '
        zmodload zsh/zpty
        zpty z "PS1=\"> \" zsh -f -i"
        zpty -w z "fpath=($1 \$fpath); path=($1 \$path); autoload -U compinit; compinit -u -D; setopt nobeep"
        sleep 1
        zpty -w -n z $'"'"'periscope record --fr\t'"'"'
        sleep 3
        zpty -w -n z $'"'"'\C-u'"'"'
        zpty -w -n z $'"'"'periscope report --by-p\t'"'"'
        sleep 3
        while zpty -r -t z line; do print -rn -- "$line"; done' zsh-test "$TEST_TMP" |
        tr -d '\r' | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g')
grep -aq -- 'periscope record --frequency=' <<<"$screen" || fail "zsh: 'periscope record --fr<Tab>' did not give --frequency=: $screen"
grep -aq -- 'periscope report --by-process' <<<"$screen" || fail "zsh: 'periscope report --by-p<Tab>' did not give --by-process: $screen"
echo "ok: zsh completes record --fr and report --by-p"

# --container's action, as _arguments calls it (compadd shows what it adds)
fake_flatpak_app org.example.ZshApp
got=$(env -i PATH="$PATH" DBUS_SYSTEM_BUS_ADDRESS="$DBUS_SYSTEM_BUS_ADDRESS" XDG_STATE_HOME="$XDG_STATE_HOME" \
        PERISCOPED="$PERISCOPED" zsh -f -c '_periscope() { :; }; source "$1" 2>/dev/null
                compadd() { print -rl -- ${(P)${@[-1]}}; }
                prog=$2 words=(record --container "") CURRENT=3 _periscope_containers' zsh-test "$COMPLETION" "$PERISCOPE")
grep >/dev/null -x org.example.ZshApp <<<"$got" || fail "zsh: --container offers '$got', not the app"
echo "ok: zsh completes --container from periscope list"
