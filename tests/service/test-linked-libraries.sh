#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# periscoped links nothing network-facing: no libdebuginfod, curl, TLS,
# Kerberos, LDAP or ssh libraries (debuginfod downloads run in
# periscope-debuginfod-fetch, in its own sandbox), and the fetcher is the
# one that has them.
set -euo pipefail
. "$(dirname "$0")/../lib/test-lib.sh" # fail, as_user, wait_for
: "${PERISCOPED:?}" "${PERISCOPE_DEBUGINFOD_FETCH:?}"
network='libdebuginfod|libcurl|libgnutls|libssl|libcrypto\.so|libkrb5|libgssapi|libldap|libssh|libnghttp|libpsl|librtmp|libidn2'
daemon=$(ldd "$PERISCOPED")
echo "$daemon"
n=$(echo "$daemon" | wc -l)
if echo "$daemon" | grep -E "$network"; then
        fail "periscoped links network-facing libraries (above)"
fi
echo "ok: periscoped links $n libraries, none network-facing"
# (the whole list first: grep -q would end the pipe early, and pipefail fail it)
fetcher=$(ldd "$PERISCOPE_DEBUGINFOD_FETCH")
echo "$fetcher" | grep -E "libdebuginfod" >/dev/null || fail "the fetcher does not link libdebuginfod (is the check above looking at the right names?)"
echo "ok: periscope-debuginfod-fetch links libdebuginfod ($(echo "$fetcher" | wc -l) libraries)"
