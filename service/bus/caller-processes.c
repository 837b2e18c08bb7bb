/* caller-processes.c: see caller-processes.h. */
#include "caller-processes.h"

#include <dirent.h>
#include <errno.h>

#include "basic.h"
#include "process.h"

bool caller_may_list(const Caller *caller, pid_t pid) {
        return caller->uid == 0 || process_owned_by(pid, caller->uid);
}

int caller_processes_foreach(const Caller *caller, CallerProcessFunc each, void *userdata) {
        _cleanup_closedir_ DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        pid_t pid;
        while (proc_dir_next_pid(d, &pid, NULL)) {
                if (!caller_may_list(caller, pid))
                        continue;
                int r = each(pid, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}
