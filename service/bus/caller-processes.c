/* SPDX-License-Identifier: LGPL-2.1-or-later */
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

typedef struct AppendOne {
        sd_bus_message *reply;
        CallerProcessAppend append;
        void *userdata;
} AppendOne;

static int append_one(pid_t pid, void *userdata) {
        const AppendOne *a = userdata;
        return a->append(a->reply, pid, a->userdata);
}

int caller_processes_start_reply(sd_bus_message *m, const Caller *caller, CallerProcessAppend append, void *userdata,
                                 sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        if (r < 0)
                return r;
        r = caller_processes_foreach(caller, append_one, &(AppendOne) { reply, append, userdata });
        if (r < 0)
                return r;
        *ret = TAKE_PTR(reply);
        return 0;
}

int caller_processes_reply(sd_bus_message *m, const Caller *caller, CallerProcessAppend append,
                           CallerReplyAppend append_more, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r = caller_processes_start_reply(m, caller, append, userdata, &reply);
        if (r >= 0 && append_more)
                r = append_more(reply, userdata);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}
