# SPDX-License-Identifier: LGPL-2.1-or-later
# fish completion for periscope(1). As in periscope.bash and _periscope, the
# commands come from `periscope --help` and each command's options from
# `periscope COMMAND --help`, the tables the CLI parses, read when fish
# loads this file (at the first Tab on periscope), so it cannot drift.
# Installed as /usr/share/fish/vendor_completions.d/periscope.fish.

# The periscope being completed: the command line's first word when it is
# one (./build/cli/periscope), else the one in $PATH.
function __periscope_prog
    set -l words (commandline -opc)
    if set -q words[1]; and string match -q -- '*periscope' $words[1]; and command -q $words[1]
        echo $words[1]
    else
        echo periscope
    end
end

# The commands as "name<TAB>summary", one a line.
function __periscope_commands
    set -l prog (__periscope_prog)
    $prog --help 2>/dev/null | string replace -rf '^  ([a-z]+) +(.*)$' '$1\t$2'
end

# True while the command line names no command yet.
function __periscope_no_command
    for w in (commandline -opc)[2..-1]
        string match -q -- '-*' $w; or return 1
    end
    return 0
end

# True when the command line's command is one of ARGV, before record's "--".
function __periscope_in
    set -l words (commandline -opc)[2..-1]
    set -l cmd
    for w in $words
        if test -z "$cmd"
            string match -q -- '-*' $w; or set cmd $w
        else if test "$w" = --
            return 1
        end
    end
    test -n "$cmd"; and contains -- $cmd $argv
end

# True after record's "--": the words from there are the recorded command's.
function __periscope_after_dashdash
    set -l words (commandline -opc)[2..-1]
    set -l i (contains -i -- -- $words); or return 1
    test $i -gt 1 # "--" after the command
end

# The recorded command's completions: "periscope record -- make -j<TAB>"
# completes as "make -j<TAB>" does.
function __periscope_recorded
    set -l words (commandline -opc)
    set -l i (contains -i -- -- $words)
    set -l line (string escape -- $words[(math $i + 1)..-1]) (commandline -ct)
    complete -C (string join ' ' -- $line)
end

# Captures (*.syscap) and directories under the word being completed.
function __periscope_captures
    set -l cur (commandline -ct)
    set -l found $cur*.syscap $cur*/
    printf '%s\n' $found
end

# Processes the caller may record, "pid<TAB>name": all for root, else the
# caller's own.
function __periscope_pids
    if test (id -u) = 0
        ps -e -o pid=,comm= 2>/dev/null
    else
        ps -u (id -u) -o pid=,comm= 2>/dev/null
    end | string replace -rf '^ *([0-9]+) +(.*)$' '$1\t$2'
end

# The containers and Flatpak apps `periscope list` shows, "name<TAB>engine
# image", asking the periscoped the command line names (--session-bus,
# --address, --private).
function __periscope_containers
    set -l words (commandline -opc)
    set -l bus
    for i in (seq 2 (count $words))
        switch $words[$i]
            case --session-bus --private '--address=*'
                set -a bus $words[$i]
            case --address
                set -q words[(math $i + 1)]; and set -a bus --address=$words[(math $i + 1)]
        end
    end
    set -l prog (__periscope_prog)
    $prog list $bus 2>/dev/null | awk '
        /^Containers and Flatpak apps:/ { c = 1; next }
        c && /^  ENGINE / { next }
        c && /^$/ { c = 0 }
        c && /^  [^ (]/ { printf "%s\t%s %s\n", $2, $1, $NF }'
end

complete -c periscope -f
complete -c periscope -n __periscope_no_command -a '(__periscope_commands)'
complete -c periscope -n __periscope_no_command -l help -d 'Show the commands'
complete -c periscope -n __periscope_no_command -l version -d 'Show the version and the features built in'
complete -c periscope -n __periscope_after_dashdash -a '(__periscope_recorded)'
# captures for the commands that read one
complete -c periscope -n '__periscope_in info dump report export symbolize' -a '(__periscope_captures)'

# Every option of every command, from its --help: "  -x, --name=VALUE  text"
# or "  --name  text".
function __periscope_add_options
    set -l prog (__periscope_prog)
    for cmd in (__periscope_commands | string replace -r '\t.*' '')
        for o in ($prog $cmd --help 2>/dev/null | string replace -rf '^  +(?:-([[:alnum:]]), )?--([[:alnum:]-]+)(=\S*)? +(.*)$' '$1\x1f$2\x1f$3\x1f$4')
            set -l f (string split \x1f -- $o)
            set -l spec -c periscope -n "__periscope_in $cmd" -l $f[2] -d $f[4]
            test -z "$f[1]"; or set -a spec -s $f[1]
            if test -n "$f[3]"
                switch $f[2]
                    case pid
                        set -a spec -x -a '(__periscope_pids)'
                    case container
                        set -a spec -x -a '(__periscope_containers)'
                    case output address
                        set -a spec -r -F
                    case '*'
                        set -a spec -x
                end
            end
            complete $spec
        end
    end
end
__periscope_add_options
functions -e __periscope_add_options
