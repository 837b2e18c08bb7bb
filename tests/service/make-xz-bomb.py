#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""make-xz-bomb.py OUT MIB: writes an xz stream of MIB MiB of zeros (512 MiB
give about 77 KiB), the .gnu_debugdata of the xz-bomb test's ELF file."""
import lzma
import sys

out, mib = sys.argv[1], int(sys.argv[2])
c = lzma.LZMACompressor(format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)
zeros = bytes(1 << 20)
with open(out, "wb") as f:
    for _ in range(mib):
        f.write(c.compress(zeros))
    f.write(c.flush())
