# SPDX-License-Identifier: LGPL-2.1-or-later
# frames-target.py: the program test-python-real reads. Its main thread
# sleeps in <module> -> outer -> Worker.middle -> (map, a C call) -> leaf
# -> time.sleep, another thread in t_outer -> t_leaf -> time.sleep. It
# prints "ready MAIN_TID OTHER_TID THREADING_FILE" once the other thread
# has started; the reader waits until both sleep. The test finds each
# expected line by its "mark:" comment.
import threading
import time

started = threading.Event()


def t_leaf():
    started.set(); time.sleep(3600)  # mark:t_leaf


def t_outer():
    t_leaf()  # mark:t_outer


def leaf(_):
    print("ready", threading.get_native_id(), other.native_id, threading.__file__, flush=True); time.sleep(3600)  # mark:leaf


class Worker:
    def middle(self):
        list(map(leaf, [0]))  # mark:middle


def outer():
    Worker().middle()  # mark:outer


other = threading.Thread(target=t_outer, name="other", daemon=True)
other.start()
started.wait()
outer()  # mark:module
