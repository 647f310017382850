/*
 * fuzz_cgroupfs.c - libFuzzer target for the cgroup file parsers
 * (lib/cgroupfs.c): mountinfo, /proc/self/cgroup (v2 and each v1
 * hierarchy), their join, flat-keyed files, one-number files, controller
 * lists and cgroup.procs.
 *
 * Input: byte 0 picks the controller (none: v2, memory, pids, cpu, or an
 * odd one), the rest is the text every parser reads. What a parser says it
 * found must be a NUL-terminated absolute path that fits, a pid list no
 * longer than its room with every pid above 0, and a parse must not depend
 * on bytes past the length it was given (the text is copied into a buffer
 * of exactly that size, so ASan sees any read beyond it).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "contain/cgroupfs.h"
#include "fuzzutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_path(const char *p)
{
    size_t n = strnlen(p, SHX_CGROUP_PATH_MAX);
    FZ_CHECK(n < SHX_CGROUP_PATH_MAX, "a path without its NUL");
    FZ_CHECK(p[0] == '/', "a relative path: %s", p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const controllers[] = {NULL, "memory", "pids", "cpu", "cpuacct"};
    if (size < 1)
        return 0;
    const char *controller = controllers[data[0] % 5];
    size_t len = size - 1;
    char *text = malloc(len ? len : 1); /* exactly the text: a read past it is seen */
    if (!text)
        return 0;
    memcpy(text, data + 1, len);

    static char self[SHX_CGROUP_PATH_MAX], mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    static char dir[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    int have_self = shx_cgroupfs_v1_self(text, len, controller, self, &reason) == 0;
    if (have_self)
        check_path(self);
    else
        FZ_CHECK(reason != NULL, "a failure without a reason");
    reason = NULL;
    if (shx_cgroupfs_v1_mount(text, len, controller, have_self ? self : NULL, mount, root,
                              &reason) == 0) {
        check_path(mount);
        check_path(root);
        if (have_self && shx_cgroupfs_join(mount, root, self, dir, &reason) == 0) {
            check_path(dir);
            size_t m = strlen(mount); /* a trailing slash of the mount point may go */
            while (m > 1 && mount[m - 1] == '/')
                m--;
            FZ_CHECK(strncmp(dir, mount, m) == 0, "the join left the mount");
        }
    } else {
        FZ_CHECK(reason != NULL, "a failure without a reason");
    }
    unsigned long long v;
    (void)shx_cgroupfs_key(text, len, "populated", &v);
    (void)shx_cgroupfs_number(text, len, &v);
    unsigned bits = shx_cgroupfs_controllers(text, len);
    FZ_CHECK((bits & ~(unsigned)(SHX_CGROUP_CPU | SHX_CGROUP_MEMORY | SHX_CGROUP_PIDS)) == 0,
             "an unknown controller bit");
    pid_t pids[16];
    long n = shx_cgroupfs_pids(text, len, pids, 16);
    FZ_CHECK(n <= 16, "more pids than room");
    for (long i = 0; i < n; i++)
        FZ_CHECK(pids[i] > 0, "pid %ld", (long)pids[i]);
    free(text);
    return 0;
}
