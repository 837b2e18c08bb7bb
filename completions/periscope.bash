# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for periscope(1). The commands come from `periscope
# --help` and each command's options from `periscope COMMAND --help`:
# GOption prints the very tables the CLI parses, so the completion cannot
# drift from them. Installed as
# /usr/share/bash-completion/completions/periscope (loaded on first use).

# The commands, one a line.
_periscope_commands() {
        "$1" --help 2>/dev/null | awk '/^Commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { c = 0 }'
}

# The options of command $2, one a line: "--name" for a flag, "--name=" for
# one that takes a value, and "-x" for the short names.
_periscope_options() {
        "$1" "$2" --help 2>/dev/null | sed -n -E 's/^  +((-[[:alnum:]]), )?(--[[:alnum:]-]+)(=[^ ]*)? .*/\2 \3 \4/p' |
                while read -r a b c; do
                        if [ -z "$b" ] || [[ $b == =* ]]; then # no short name: a=--long, b=value
                                c=$b b=$a a=
                        fi
                        [ -z "$a" ] || echo "$a"
                        echo "$b${c:+=}"
                done
}

# Processes the caller may record: all for root, else the caller's own.
_periscope_pids() {
        if [ "$(id -u)" = 0 ]; then
                ps -e -o pid= 2>/dev/null
        else
                ps -u "$(id -u)" -o pid= 2>/dev/null
        fi | tr -d ' '
}

# The names of the containers and Flatpak apps `periscope list` shows, one
# a line, asking the periscoped the command line names (--session-bus,
# --private, --address).
_periscope_containers() {
        local prog=$1 i bus=()
        for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                --session-bus | --private | --address=*) bus+=("${COMP_WORDS[i]}") ;;
                --address) bus+=("--address=${COMP_WORDS[i + 1]:-}") ;;
                esac
        done
        "$prog" list "${bus[@]}" 2>/dev/null | awk '/^Containers and Flatpak apps:/ { c = 1; next }
                c && /^  ENGINE / { next } c && /^$/ { c = 0 } c && /^  [^ (]/ { print $2 }'
}

_periscope() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd= i
        local prog=${COMP_WORDS[0]}
        for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                --) return 0 ;; # the recorded command's own arguments: left to it
                -*) ;;
                *) cmd=${COMP_WORDS[i]}; break ;;
                esac
        done
        if [ -z "$cmd" ]; then
                mapfile -t COMPREPLY < <(compgen -W "$(_periscope_commands "$prog") --help" -- "$cur")
                return 0
        fi
        # after "--" in record: the command to run
        for ((i = i + 1; i < COMP_CWORD; i++)); do
                if [ "${COMP_WORDS[i]}" = -- ]; then
                        mapfile -t COMPREPLY < <(compgen -c -- "$cur")
                        return 0
                fi
        done
        # the value of an option given as "--name value" or "-x value"
        case $prev in
        -p | --pid)
                mapfile -t COMPREPLY < <(compgen -W "$(_periscope_pids)" -- "$cur")
                return 0 ;;
        -c | --container)
                mapfile -t COMPREPLY < <(compgen -W "$(_periscope_containers "$prog")" -- "$cur")
                return 0 ;;
        -o | --output)
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                return 0 ;;
        esac
        if [[ $cur == --pid=* ]]; then
                mapfile -t COMPREPLY < <(compgen -P --pid= -W "$(_periscope_pids)" -- "${cur#--pid=}")
                return 0
        fi
        if [[ $cur == --container=* ]]; then
                mapfile -t COMPREPLY < <(compgen -P --container= -W "$(_periscope_containers "$prog")" -- "${cur#--container=}")
                return 0
        fi
        if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "$(_periscope_options "$prog" "$cmd")" -- "$cur")
                # an option that takes a value: no space after its "="
                [[ ${COMPREPLY[0]:-} != *= ]] || compopt -o nospace 2>/dev/null || true
                return 0
        fi
        # captures for the commands that read one
        mapfile -t COMPREPLY < <(compgen -f -X '!*.syscap' -- "$cur"; compgen -d -- "$cur")
        return 0
}
complete -F _periscope periscope
