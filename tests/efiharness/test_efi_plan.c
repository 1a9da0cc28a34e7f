/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The loader executes the boot plan (src/plan.c) that `mshim predict`
 * assumes: for generated ESP trees (entries valid and broken, listed in a
 * random order, loader.conf absent, with a default glob, or broken), the
 * events the loader makes (loader.conf, the unusable entries, each entry
 * it tries, the exit markers and the lock) follow the plan's measurement
 * steps that mb_plan_build makes of the same bytes, event for event. No kernel image exists, so the loader tries
 * every usable entry in turn and then returns to the firmware.
 */
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>
#include "harness.h"
#include "mb/plan.h"
#include "mb/tcglog.h"

#define MAX_FILES 7
#define N_ESPS 300

typedef struct gen_esp {
        char conf[128];
        bool has_conf;
        const char *oneshot, *entry_default;    /* NULL: not set */
        char names[MAX_FILES][24];
        bool writable;          /* the volume can be written (else renames fail) */
        char texts[MAX_FILES][160];
        size_t n;
} gen_esp;

static uint64_t rng;

static uint32_t next(void) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        return (uint32_t) (rng >> 11);
}

static const char *pick(const char *const *v, size_t n) {
        return v[next() % n];
}

static void gen_entry(char *out, size_t cap) {
        static const char *const versions[] = { "6.1.0-9", "6.1.0-10", "6.1.0-10-rt", "5.10", "", "6.1.0-9~bpo" };
        static const char *const keys[] = { "", "sort-key debian\n", "sort-key arch\n" };
        static const char *const broken[] = { "nonsense\n", "title only a title\n",
                                               "linux /k\noptions a initrd=\\x.img\n", "linux\n", "" };

        if (next() % 4 == 0) {
                snprintf(out, cap, "%s", pick(broken, MB_ARRAY_SIZE(broken)));
                return;
        }
        const char *v = pick(versions, MB_ARRAY_SIZE(versions));
        snprintf(out, cap, "title T\n%s%s%s%slinux /vmlinuz-%s\noptions root=/dev/vda2\n", pick(keys, MB_ARRAY_SIZE(keys)),
                 *v ? "version " : "", v, *v ? "\n" : "", *v ? v : "x");
}

static void gen(uint64_t seed, gen_esp *g) {
        static const char *const confs[] = { "", "default a*\n", "default b.conf\n", "default zz\n",
                                             "timeout soon\n", "default *rt*\ntimeout 3\n" };
        static const char *const stems[] = { "a", "b", "c", "aa", "debian-6", "z", "B" };
        static const char *const ids[] = { NULL, NULL, "a", "b.conf", "zz", "debian-6", "" };
        /* Boot counters (BLS "Boot counting"), valid and not. */
        static const char *const counters[] = { "", "", "+3", "+1-0", "+0-2", "+2-5", "+x" };

        memset(g, 0, sizeof(*g));
        rng = seed * 0x9E3779B97F4A7C15ull + 1;
        g->has_conf = next() % 5 != 0;
        g->writable = next() % 4 != 0;
        g->oneshot = pick(ids, MB_ARRAY_SIZE(ids));
        g->entry_default = pick(ids, MB_ARRAY_SIZE(ids));
        snprintf(g->conf, sizeof(g->conf), "%s", pick(confs, MB_ARRAY_SIZE(confs)));
        for (size_t i = 0, want = next() % (MAX_FILES + 1); i < want; i++) {
                const char *stem = pick(stems, MB_ARRAY_SIZE(stems));
                bool dup = false;

                for (size_t j = 0; j < g->n; j++)
                        dup |= strncasecmp(g->names[j], stem, strlen(stem)) == 0 &&
                               (g->names[j][strlen(stem)] == '.' || g->names[j][strlen(stem)] == '+');
                if (dup)
                        continue;       /* FAT names are unique regardless of case */
                snprintf(g->names[g->n], sizeof(g->names[0]), "%s%s.conf", stem, pick(counters, MB_ARRAY_SIZE(counters)));
                gen_entry(g->texts[g->n], sizeof(g->texts[0]));
                g->n++;
        }
}

/* The name at the end of a PCR 5 file event's UTF-16 path, in ASCII. */
static void event_name(const fh_event *e, char *out, size_t cap) {
        size_t len = e->event_size >= 8 ? e->event_size - 8 : 0, k = 0;
        const uint8_t *p = e->event + 8;

        out[0] = 0;
        for (size_t i = 0; i + 1 < len && p[i]; i += 2) {
                if (p[i] == '\\')
                        k = 0;
                else if (k + 1 < cap)
                        out[k++] = (char) p[i];
                out[k] = 0;
        }
}

static const EFI_GUID loader_guid = { 0x4a67b082, 0x0a4c, 0x41cf, { 0xb6, 0xc7, 0x44, 0x0b, 0x29, 0xbb, 0x8c, 0x4f } };

/* A Boot Loader Interface variable: the id as UTF-16LE with its NUL. */
static void set_id_var(const CHAR16 *name, const char *id) {
        uint8_t v[64];
        size_t n = strlen(id);

        for (size_t i = 0; i <= n; i++) {
                v[2 * i] = (uint8_t) id[i];
                v[2 * i + 1] = 0;
        }
        fh_var(name, &loader_guid, v, 2 * (n + 1));
}

/* The variable's value as ASCII ("" when absent). */
static void get_id_var(const CHAR16 *name, char *out, size_t cap) {
        const fh_var_value *v = fh_var_get(name, &loader_guid);
        size_t k = 0;

        for (size_t i = 0; v && i + 1 < v->size && v->data[i] && k + 1 < cap; i += 2)
                out[k++] = (char) v->data[i];
        out[k] = 0;
}

/* What the plan says the loader measures, in order: its start steps,
 * for each entry tried the steps up to the first that needs the image
 * (none exists here: each try ends after its entry file), then the exit
 * steps. */
typedef struct want_event {
        uint32_t pcr, type, tag;
        const char *name;       /* PCR 5 file events: the file's name */
} want_event;

static size_t plan_events(const mb_plan *plan, const char *const *ids, want_event *w) {
        size_t n = 0;

        for (size_t k = 0; k < plan->n_start; k++) {
                const mb_plan_step *s = &plan->start[k];
                w[n++] = (want_event) { s->pcr, s->type, s->tag,
                                        s->src == MB_PLAN_SRC_LOADER_CONF ? "loader.conf" : ids[s->entry] };
        }
        for (size_t k = 0; k < plan->n_boot; k++)
                for (size_t j = 0; j < plan->n_tries[k] && plan->tries[k][j].src == MB_PLAN_SRC_ENTRY; j++) {
                        const mb_plan_step *s = &plan->tries[k][j];
                        w[n++] = (want_event) { s->pcr, s->type, s->tag, ids[s->entry] };
                }
        for (size_t k = 0; k < plan->n_exit; k++)
                w[n++] = (want_event) { plan->exit[k].pcr, plan->exit[k].type, plan->exit[k].tag, NULL };
        return n;
}

/* The entry files after the boot: each counted entry tried renamed to
 * its next name (when the volume is writable and the name is free), in
 * the order tried; the others as they were. */
static void check_renames(size_t seed, const gen_esp *g, const mb_plan_entry *pe, const mb_plan *plan) {
        char now[MAX_FILES][MB_PLAN_NAME_MAX + 16], path[MB_PLAN_NAME_MAX + 48];

        for (size_t i = 0; i < g->n; i++)
                snprintf(now[i], sizeof(now[i]), "%s", g->names[i]);
        for (size_t k = 0; g->writable && k < plan->n_boot; k++) {
                size_t i = plan->boot[k];
                bool taken = false;

                if (!pe[i].counter.counted)
                        continue;
                for (size_t j = 0; j < g->n; j++)
                        taken |= j != i && strcasecmp(now[j], pe[i].next_name) == 0;
                if (!taken)
                        snprintf(now[i], sizeof(now[i]), "%s", pe[i].next_name);
        }
        for (size_t i = 0; i < g->n; i++) {
                snprintf(path, sizeof(path), "/loader/entries/%s", now[i]);
                if (!fh_file_bytes(path))
                        fh_fail(__FILE__, __LINE__, "ESP %zu: no %s after the boot (was %s)", seed, now[i], g->names[i]);
        }
}

/* Does the loader follow the plan: every one of mshim's events (PCR,
 * type, tag, and for PCR 5 files the name) in the plan's order? */
static void one_esp(size_t seed) {
        mb_plan_entry pe[MAX_FILES], *pv[MAX_FILES];
        mb_boot_policy policy = { 0 };
        size_t k = 0, order[MAX_FILES], n_want;
        want_event want[1 + 2 * MAX_FILES + MB_PLAN_END_STEPS];
        gen_esp g;
        mb_plan_vars vars = { 0 };
        mb_plan plan;
        char name[64], idv[MAX_FILES][32];
        const char *ids[MAX_FILES];

        gen(seed, &g);
        fh_volume_writable(g.writable);
        /* Listed in a random order: the plan must not depend on it. */
        for (size_t i = 0; i < g.n; i++)
                order[i] = i;
        for (size_t i = g.n; i > 1; i--) {
                size_t j = next() % i, t = order[i - 1];
                order[i - 1] = order[j];
                order[j] = t;
        }
        if (g.has_conf)
                fh_file_str("/loader/loader.conf", g.conf);
        for (size_t i = 0; i < g.n; i++) {
                char path[64];

                snprintf(path, sizeof(path), "/loader/entries/%s", g.names[order[i]]);
                fh_file_str(path, g.texts[order[i]]);
        }
        if (g.oneshot)
                set_id_var(L"LoaderEntryOneShot", g.oneshot);
        if (g.entry_default)
                set_id_var(L"LoaderEntryDefault", g.entry_default);
        fh_boot();

        for (size_t i = 0; i < g.n; i++) {
                pe[i] = (mb_plan_entry) { .id = { g.names[i], strlen(g.names[i]) }, .buf = g.texts[i], .size = strlen(g.texts[i]) };
                pv[i] = &pe[i];
        }
        vars.oneshot_set = g.oneshot != NULL;
        vars.oneshot = (mb_str) { g.oneshot ? g.oneshot : "", g.oneshot ? strlen(g.oneshot) : 0 };
        vars.entry_default = (mb_str) { g.entry_default ? g.entry_default : "", g.entry_default ? strlen(g.entry_default) : 0 };
        FH_CHECK_EQ(mb_plan_build(&policy, &vars, g.has_conf ? MB_PLAN_CONF_READ : MB_PLAN_CONF_ABSENT, g.conf,
                                  strlen(g.conf), pv, g.n, &plan), MB_OK);
        /* The measured name is the entry id: the file name without its
         * boot counter (docs/MEASUREMENTS.md). */
        for (size_t i = 0; i < g.n; i++) {
                mb_str id = { "", 0 };

                FH_CHECK_EQ(mb_plan_entry_id(pe[i].id, idv[i], sizeof(idv[i]) - 1, &id), MB_OK);
                idv[i][id.len] = 0;
                ids[i] = idv[i];
        }
        n_want = plan_events(&plan, ids, want);

        /* The loader's own events, in order (not the fake firmware's). */
        for (size_t i = 0; i < fh_n_events(); i++) {
                const fh_event *e = fh_event_at(i);
                uint32_t tag = 0;

                if (e->by_firmware)
                        continue;
                if (e->type == MB_EV_EVENT_TAG && e->event_size >= 4)
                        memcpy(&tag, e->event, 4);
                name[0] = 0;
                if (e->pcr == 5 && tag != MB_TAG_EXIT)
                        event_name(e, name, sizeof(name));
                if (k >= n_want || e->pcr != want[k].pcr || e->type != want[k].type || tag != want[k].tag ||
                    (want[k].name && strcmp(name, want[k].name) != 0))
                        fh_fail(__FILE__, __LINE__, "ESP %zu: event %zu is PCR %u %08x %08x %s, the plan says %s",
                                seed, k, e->pcr, e->type, tag, name, k < n_want ? (want[k].name ? want[k].name : "(no file)") : "nothing");
                k++;
        }
        FH_CHECK_EQ(k, n_want);
        /* OneShot read once: gone, whatever it named; the entry tried last
         * is the selected one. */
        FH_CHECK(fh_var_get(L"LoaderEntryOneShot", &loader_guid) == NULL);
        get_id_var(L"LoaderEntrySelected", name, sizeof(name));
        if (strcmp(name, plan.n_boot ? ids[plan.boot[plan.n_boot - 1]] : "") != 0)
                fh_fail(__FILE__, __LINE__, "ESP %zu: LoaderEntrySelected is \"%s\"", seed, name);
        check_renames(seed, &g, pe, &plan);
}

/* fh_boot runs once a process: each ESP in a child of its own. */
FH_CASE(the_loader_follows_the_plan_on_generated_esps) {
        for (size_t seed = 0; seed < N_ESPS; seed++) {
                int status = 0;
                pid_t pid = fork();

                if (pid == 0) {
                        one_esp(seed);
                        fflush(stderr);
                        _exit(fh_case_ok() ? 0 : 1);
                }
                waitpid(pid, &status, 0);
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        fh_fail(__FILE__, __LINE__, "generated ESP %zu: the loader did not follow the plan", seed);
        }
}

int main(void) {
        FH_RUN(the_loader_follows_the_plan_on_generated_esps);
        return fh_exit_status();
}
