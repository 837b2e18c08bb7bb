# sysprof-bus.sh (sourced by the bench scripts): Sysprof 3.46's sysprofd on a
# private system bus with polkitd (see RECIPES), so `sysprof-cli` runs as it
# does on a desktop. sysprof_bus_start TMPDIR sets SYSPROF_REASON to why
# Sysprof cannot run here (empty when it can); sysprof_bus_stop ends it all.
sysprof_bus_start() {
        local tmp=$1 top
        top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
        SYSPROF_REASON=""
        if ! command -v sysprof-cli >/dev/null || [ ! -x /usr/libexec/sysprofd ]; then
                SYSPROF_REASON="sysprof not installed (apt-get install -y sysprof polkitd)"
        elif ! grep -qs 'org.gnome.sysprof' /etc/polkit-1/rules.d/*.rules; then
                SYSPROF_REASON="no polkit rule for root (scripts/setup.d/20-polkit-sysprof.sh)"
        else
                . "$top/tests/lib/private-bus.sh"
                if private_bus_start && private_polkit_start; then
                        /usr/libexec/sysprofd >"$tmp/sysprofd.log" 2>&1 &
                        private_bus_track $!
                        private_bus_wait_name org.gnome.Sysprof3 10 $! || SYSPROF_REASON="sysprofd did not start"
                else
                        SYSPROF_REASON="private system bus or polkitd did not start"
                fi
        fi
        export SYSPROF_REASON
}

sysprof_bus_stop() {
        if command -v private_bus_stop >/dev/null; then
                private_bus_stop
        fi
}
