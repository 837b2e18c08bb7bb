/* container-targets.c: ListTargets() entries for containers and apps (see
 * container-targets.h). */
#include "container-targets.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "authorization.h"
#include "basic.h"
#include "fiber.h"
#include "process.h"
#include "resolver.h"

static int append_instance(sd_bus_message *reply, const ContainerInstance *inst) {
        const ContainerInfo *ci = &inst->info;
        const char *kind = ci->engine == CONTAINER_ENGINE_FLATPAK ? "flatpak" : "container";
        int r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}", "kind", "s", kind, "engine", "s",
                                  container_engine_to_string(ci->engine), "id", "s", ci->id, "name", "s", ci->name,
                                  "image", "s", ci->image, "owner-uid", "u", (uint32_t) ci->owner_uid);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "s", "pids");
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'v', "ai");
        if (r < 0)
                return r;
        r = sd_bus_message_append_array(reply, 'i', inst->pids, inst->n_pids * sizeof(int32_t));
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Keeps only the processes of inst that caller_uid may record on its own
 * (its uid, or a user namespace it owns; dumpable). */
static void keep_callers_pids(ContainerInstance *inst, uid_t caller_uid) {
        size_t kept = 0;
        for (size_t j = 0; j < inst->n_pids; j++)
                if (process_owned_by(inst->pids[j], caller_uid))
                        inst->pids[kept++] = inst->pids[j];
        inst->n_pids = kept;
}

/* ---- ListTargets() on a fiber ---- */

/* Calls waiting for their containers at most (each holds a reply). */
#define TARGETS_MAX_WAITING 64

typedef struct TargetsCall {
        sd_bus_message *call, *reply;
        uid_t uid;
} TargetsCall;

struct ContainerTargets {
        sd_event *event;
        HelperClientConfig helper_config;
        HelperClient *helper;       /* used on the fiber only */
        Fiber *fiber;               /* listing for calls[0] */
        TargetsCall calls[TARGETS_MAX_WAITING];
        size_t n_calls;
        bool freeing;
};

static int targets_wait_readable(int fd, unsigned timeout_ms, void *userdata) {
        ContainerTargets *t = userdata;
        if (!t->fiber) { /* never: the helper is asked on the fiber only */
                struct pollfd p = { .fd = fd, .events = POLLIN };
                int k = poll(&p, 1, (int) timeout_ms);
                return k < 0 ? (errno == EINTR ? 0 : -errno) : k > 0;
        }
        return fiber_wait_readable(fd, timeout_ms, t->fiber);
}

static void targets_yield(void *userdata) {
        ContainerTargets *t = userdata;
        if (t->fiber)
                (void) fiber_yield(t->fiber);
}

int container_targets_new(sd_event *e, const HelperClientConfig *helper_config, ContainerTargets **ret) {
        ContainerTargets *t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->event = sd_event_ref(e);
        if (helper_config)
                t->helper_config = *helper_config;
        t->helper_config.wait_readable = targets_wait_readable;
        t->helper_config.wait_readable_userdata = t;
        t->helper_config.yield = targets_yield;
        *ret = t;
        return 0;
}

static void start_next(ContainerTargets *t);

static int list_on_fiber(Fiber *f, void *userdata) {
        ContainerTargets *t = userdata;
        if (!t->helper) {
                int r = helper_client_new(&t->helper_config, &t->helper);
                if (r < 0)
                        t->helper = NULL; /* then no Flatpak instance is named: said in the log */
        }
        Resolver *res = NULL;
        ContainerInstance *inst = NULL;
        size_t n = 0;
        int r = resolver_new(&res);
        if (r < 0)
                return r;
        resolver_set_log_func(res, resolver_log_warning, NULL);
        resolver_set_user_file_helper(res, t->helper);
        resolver_set_yield_func(res, targets_yield, t);
        r = container_list_instances(res, &inst, &n);
        resolver_free(res);
        if (r >= 0 && fiber_yield(f) == -ECANCELED)
                r = -ECANCELED;
        /* the reply is appended to at once, after the last wait */
        TargetsCall *c = &t->calls[0];
        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (c->uid != 0)
                        keep_callers_pids(&inst[i], c->uid);
                if (inst[i].n_pids > 0)
                        r = append_instance(c->reply, &inst[i]);
        }
        container_instances_free(inst, n);
        return r < 0 ? r : 0;
}

static void list_done(int result, void *userdata) {
        ContainerTargets *t = userdata;
        t->fiber = NULL;
        TargetsCall c = t->calls[0];
        memmove(&t->calls[0], &t->calls[1], (t->n_calls - 1) * sizeof(t->calls[0]));
        t->n_calls--;
        int r = result;
        if (r >= 0)
                r = sd_bus_message_close_container(c.reply);
        if (r >= 0) {
                /* the caller may have left meanwhile: nobody to tell */
                r = sd_bus_send(NULL, c.reply, NULL);
                if (r < 0)
                        log_debug("ListTargets: the reply could not be sent: %s", strerror(-r));
        } else if (result != -ECANCELED) {
                log_warning("ListTargets: listing containers failed: %s", strerror(-r));
                (void) sd_bus_reply_method_errno(c.call, r, NULL);
        }
        sd_bus_message_unref(c.reply);
        sd_bus_message_unref(c.call);
        if (!t->freeing)
                start_next(t);
}

static void start_next(ContainerTargets *t) {
        while (!t->fiber && t->n_calls > 0) {
                int r = fiber_start(t->event, "listing containers", list_on_fiber, list_done, t, &t->fiber);
                if (r >= 0)
                        return;
                log_warning("ListTargets: cannot list containers: %s", strerror(-r));
                (void) sd_bus_reply_method_errno(t->calls[0].call, r, NULL);
                sd_bus_message_unref(t->calls[0].reply);
                sd_bus_message_unref(t->calls[0].call);
                memmove(&t->calls[0], &t->calls[1], (t->n_calls - 1) * sizeof(t->calls[0]));
                t->n_calls--;
        }
}

int container_targets_reply(ContainerTargets *t, sd_bus_message *call, sd_bus_message *reply, uid_t caller_uid) {
        if (t->n_calls >= TARGETS_MAX_WAITING)
                return -EBUSY;
        t->calls[t->n_calls++] = (TargetsCall) { sd_bus_message_ref(call), sd_bus_message_ref(reply), caller_uid };
        start_next(t);
        return 0;
}

ContainerTargets *container_targets_free(ContainerTargets *t) {
        if (!t)
                return NULL;
        t->freeing = true;
        if (t->fiber)
                fiber_cancel(t->fiber); /* its done callback drops calls[0] */
        for (size_t i = 0; i < t->n_calls; i++) {
                sd_bus_message_unref(t->calls[i].reply);
                sd_bus_message_unref(t->calls[i].call);
        }
        helper_client_free(t->helper);
        sd_event_unref(t->event);
        free(t);
        return NULL;
}
