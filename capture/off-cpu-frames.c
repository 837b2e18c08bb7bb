/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* off-cpu-frames.c: the `periscope.offcpu` METADATA frames. Text: lines
 * `tid=N`, `state=blocked|runnable`, `duration_ns=N`, and for a stack
 * `stack=` with the addresses in hex, comma-separated, innermost first. */
#include "off-cpu-frames.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *capture_off_cpu_state_to_string(int state) {
        switch (state) {
        case CAPTURE_OFF_CPU_BLOCKED:
                return "blocked";
        case CAPTURE_OFF_CPU_RUNNABLE:
                return "runnable";
        default:
                return NULL;
        }
}

int capture_writer_add_off_cpu(CaptureWriter *w, int64_t time, int cpu, int32_t pid, int32_t tid,
                               CaptureOffCpuState state, uint64_t duration_ns, const uint64_t *addrs, size_t n) {
        /* 17 bytes per address at most: fits a frame */
        char buf[128 + CAPTURE_OFF_CPU_MAX_ADDRS * 17];
        const char *s = capture_off_cpu_state_to_string(state);
        if (!s || tid <= 0 || (n > 0 && !addrs))
                return -EINVAL;
        if (n > CAPTURE_OFF_CPU_MAX_ADDRS)
                n = CAPTURE_OFF_CPU_MAX_ADDRS;
        int len = snprintf(buf, sizeof(buf), "tid=%d\nstate=%s\nduration_ns=%" PRIu64 "\n", (int) tid, s, duration_ns);
        if (len < 0)
                return -EINVAL;
        if (n > 0) {
                len += snprintf(buf + len, sizeof(buf) - (size_t) len, "stack=");
                for (size_t i = 0; i < n; i++)
                        len += snprintf(buf + len, sizeof(buf) - (size_t) len, "%s%" PRIx64, i ? "," : "", addrs[i]);
        }
        if ((size_t) len >= sizeof(buf))
                return -EINVAL;
        return capture_writer_add_metadata(w, time, cpu, pid, CAPTURE_OFF_CPU_ID, buf, (size_t) len);
}

/* "KEY=" at *t: moves *t past it. */
static bool take_key(const char **t, const char *key) {
        size_t l = strlen(key);
        if (strncmp(*t, key, l) != 0)
                return false;
        *t += l;
        return true;
}

static int take_u64(const char **t, uint64_t *ret) {
        char *end = NULL;
        if (**t < '0' || **t > '9')
                return -EBADMSG;
        errno = 0;
        unsigned long long v = strtoull(*t, &end, 10);
        if (errno || end == *t)
                return -EBADMSG;
        *t = end;
        *ret = v;
        return 0;
}

int capture_frame_get_off_cpu(const CaptureFrame *f, CaptureOffCpu *ret) {
        if (f->type != CAPTURE_FRAME_METADATA || strcmp(f->metadata.id, CAPTURE_OFF_CPU_ID) != 0)
                return 0;
        const char *t = f->metadata.metadata ? f->metadata.metadata : "";
        uint64_t tid, d;
        memset(ret, 0, offsetof(CaptureOffCpu, addrs));
        if (!take_key(&t, "tid=") || take_u64(&t, &tid) < 0 || tid == 0 || tid > INT32_MAX || *t++ != '\n')
                return -EBADMSG;
        if (!take_key(&t, "state="))
                return -EBADMSG;
        if (take_key(&t, "blocked\n"))
                ret->state = CAPTURE_OFF_CPU_BLOCKED;
        else if (take_key(&t, "runnable\n"))
                ret->state = CAPTURE_OFF_CPU_RUNNABLE;
        else
                return -EBADMSG;
        if (!take_key(&t, "duration_ns=") || take_u64(&t, &d) < 0)
                return -EBADMSG;
        ret->tid = (int32_t) tid;
        ret->duration_ns = d;
        if (*t == '\0')
                return 1;
        if (*t++ != '\n')
                return -EBADMSG;
        if (*t == '\0')
                return 1;
        if (!take_key(&t, "stack=") || *t == '\0')
                return -EBADMSG; /* "stack=" has at least one address */
        while (*t) {
                uint64_t a;
                if (ret->n_addrs == CAPTURE_OFF_CPU_MAX_ADDRS)
                        return -EBADMSG;
                if (!((*t >= '0' && *t <= '9') || (*t >= 'a' && *t <= 'f')))
                        return -EBADMSG;
                errno = 0;
                char *end = NULL;
                a = strtoull(t, &end, 16);
                if (errno || end == t)
                        return -EBADMSG;
                ret->addrs[ret->n_addrs++] = a;
                t = end;
                if (*t == ',' && t[1] != '\0')
                        t++;
                else if (*t != '\0')
                        return -EBADMSG;
        }
        return 1;
}
