# SPDX-License-Identifier: LGPL-2.1-or-later
# dump-vector.py: run by gdb-multiarch (make-vectors.sh) at a breakpoint of a
# program under qemu-aarch64-static: writes the unwinder's input as perf
# gives it (pc, sp, x29, x30 and the stack copied from sp upwards, at most
# 16 KiB), the executable mappings, and gdb's own backtrace (frame pcs,
# innermost first) as the expected result.
import os
import re

import gdb

out = open(VECTOR_OUT, "w")  # noqa: F821 (set by make-vectors.sh)
inf = gdb.selected_inferior()
frame = gdb.newest_frame()

def reg(name):
    return int(frame.read_register(name)) & 0xffffffffffffffff

out.write("arch aarch64\n")
for name in ("pc", "sp", "x29", "x30"):
    out.write("reg %s 0x%x\n" % (name, reg(name)))

# Code sections of every object file, as mappings (start, end, file
# offset, file): qemu's gdbstub has no "info proc mappings".
objfile = None
for line in gdb.execute("maint info sections -all-objects", to_string=True).splitlines():
    line = line.strip()
    m = re.match(r"(Exec|Object) file: `([^']*)'", line)
    if m:
        objfile = os.path.basename(m.group(2))
        continue
    f = line.split()
    if len(f) >= 5 and "->" in f[1] and f[2] == "at" and "CODE" in f[5:] and objfile:
        lo, hi = f[1].split("->")
        out.write("map %s %s %s %s\n" % (lo, hi, f[3].rstrip(":"), objfile))

sp = reg("sp")
data = b""
for off in range(0, 16384, 512):
    try:
        data += bytes(inf.read_memory(sp + off, 512))
    except gdb.MemoryError:
        break
out.write("stack 0x%x %d\n" % (sp, len(data)))
for i in range(0, len(data), 32):
    out.write("s %s\n" % data[i:i + 32].hex())

# Inline frames share their pc with the frame they are inlined into: the
# unwinder's frames are the real ones; the symbolizer adds the inline ones.
f = frame
while f is not None:
    if f.type() == gdb.INLINE_FRAME:
        out.write("inline 0x%x %s\n" % (f.pc(), f.name() or "??"))
    else:
        out.write("expect 0x%x %s\n" % (f.pc(), f.name() or "??"))
    f = f.older()
out.close()
