/*
 * test_cgroup.c - the cgroup v2 primitives. The parsers on texts: hybrid,
 * pure v2 and container mountinfos, escapes, several mounts, a removed or
 * missing cgroup, garbage and oversized input. Then live, on this
 * machine's cgroup2 (the host's own cgroup found by the module itself), in
 * a child cgroup made per test: process trees that left their session and
 * parent (setsid, double fork) listed, signalled and killed, by cgroup.kill
 * and by the freezer fallback, in cgroups below too; trees signalled,
 * ended and removed, a wide one with the smallest buffer, one deeper than
 * a walk goes; CPU accounting; limit and creation errors.
 * The live tests skip, saying why, where cgroup2 is not writable; every
 * test's teardown kills, reaps and removes what it made, and fails it when
 * a descriptor, child or cgroup is left.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "contain/cgroup.h"
#include "contain/cgroupfs.h"
#include "contain/cgtree.h"
#include "testutil.h"

/* ------------------------------------------------------------------------
 * Parsers
 * ------------------------------------------------------------------------ */

/* This machine's kind: cgroup v1 controllers with cgroup2 at .../unified. */
static const char hybrid_mountinfo[] =
    "22 1 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n"
    "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char hybrid_cgroup[] = "9:name=systemd:/\n8:pids:/\n"
                                    "4:memory:/process_api/0e36b42a20a78b9787caa3de0e6f77db\n"
                                    "1:cpu:/\n0::/\n";

static const char pure_mountinfo[] =
    "24 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
    "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 master:3 - cgroup2 "
    "cgroup2 rw,nsdelegate,memory_recursiveprot\n";

/* A container whose mount shows only its own part of the hierarchy. */
static const char container_mountinfo[] =
    "1040 900 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u\n"
    "1045 1040 0:29 /kubepods/pod12/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup rw\n";

static void locate(const char *mountinfo, const char *cgroup, const char *want)
{
    char self[SHX_CGROUP_PATH_MAX], mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    char dir[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    assert_int_equal(shx_cgroupfs_self(cgroup, strlen(cgroup), self, &reason), 0);
    assert_int_equal(shx_cgroupfs_mount(mountinfo, strlen(mountinfo), self, mount, root, &reason), 0);
    assert_int_equal(shx_cgroupfs_join(mount, root, self, dir, &reason), 0);
    assert_string_equal(dir, want);
}

static void test_mountinfo_kinds(void **state)
{
    (void)state;
    locate(hybrid_mountinfo, hybrid_cgroup, "/sys/fs/cgroup/unified");
    locate(pure_mountinfo, "0::/user.slice/user-0.slice/session-3.scope\n",
           "/sys/fs/cgroup/user.slice/user-0.slice/session-3.scope");
    locate(container_mountinfo, "0::/kubepods/pod12/abc\n", "/sys/fs/cgroup");
    locate(container_mountinfo, "0::/kubepods/pod12/abc/inner\n", "/sys/fs/cgroup/inner");
    /* a cgroup namespace: /proc/self/cgroup says "/" under a root mount */
    locate("5 1 0:29 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "0::/\n", "/sys/fs/cgroup");

    char mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    assert_int_equal(shx_cgroupfs_mount(hybrid_mountinfo, strlen(hybrid_mountinfo), NULL, mount,
                                        root, &reason),
                     0);
    assert_string_equal(mount, "/sys/fs/cgroup/unified");
    assert_string_equal(root, "/");
}

/* The v1 hierarchy of a controller on a hybrid machine: its mount (whose
 * options name it, alone or with others), the process's line in it. */
static void test_v1_hierarchies(void **state)
{
    (void)state;
    char self[SHX_CGROUP_PATH_MAX], mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    char dir[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    size_t mi = strlen(hybrid_mountinfo), cg = strlen(hybrid_cgroup);
    assert_int_equal(shx_cgroupfs_v1_self(hybrid_cgroup, cg, "memory", self, &reason), 0);
    assert_string_equal(self, "/process_api/0e36b42a20a78b9787caa3de0e6f77db");
    assert_int_equal(shx_cgroupfs_v1_mount(hybrid_mountinfo, mi, "memory", self, mount, root,
                                           &reason), 0);
    assert_string_equal(mount, "/sys/fs/cgroup/memory");
    assert_string_equal(root, "/");
    assert_int_equal(shx_cgroupfs_join(mount, root, self, dir, &reason), 0);
    assert_string_equal(dir, "/sys/fs/cgroup/memory/process_api/0e36b42a20a78b9787caa3de0e6f77db");
    assert_int_equal(shx_cgroupfs_v1_self(hybrid_cgroup, cg, "pids", self, &reason), 0);
    assert_string_equal(self, "/");
    /* a controller mounted with others ("cpu,cpuacct"), named exactly */
    static const char joint_mi[] =
        "31 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n";
    static const char joint_cg[] = "3:cpu,cpuacct:/a/b\n0::/\n";
    assert_int_equal(shx_cgroupfs_v1_mount(joint_mi, strlen(joint_mi), "cpu", NULL, mount, root,
                                           &reason), 0);
    assert_string_equal(mount, "/sys/fs/cgroup/cpu,cpuacct");
    assert_int_equal(shx_cgroupfs_v1_self(joint_cg, strlen(joint_cg), "cpuacct", self, &reason), 0);
    assert_string_equal(self, "/a/b");
    assert_int_equal(shx_cgroupfs_v1_self(joint_cg, strlen(joint_cg), "cpuac", self, &reason), -1);
    assert_int_equal(shx_cgroupfs_v1_mount(joint_mi, strlen(joint_mi), "acct", NULL, mount, root,
                                           &reason), -1);
    assert_non_null(strstr(reason, "no cgroup v1 mount"));
    /* a pure v2 machine has none; NULL still finds the v2 mount and line */
    assert_int_equal(shx_cgroupfs_v1_mount(pure_mountinfo, strlen(pure_mountinfo), "memory", NULL,
                                           mount, root, &reason), -1);
    assert_int_equal(shx_cgroupfs_v1_self("0::/x\n", 5, "memory", self, &reason), -1);
    assert_non_null(strstr(reason, "no cgroup v1 hierarchy"));
    assert_int_equal(shx_cgroupfs_v1_mount(hybrid_mountinfo, mi, NULL, NULL, mount, root, &reason), 0);
    assert_string_equal(mount, "/sys/fs/cgroup/unified");
    /* a v1 line with no path, or a malformed one */
    assert_int_equal(shx_cgroupfs_v1_self("4:memory:\n", 10, "memory", self, &reason), -1);
    assert_int_equal(shx_cgroupfs_v1_self("4:memory\n", 9, "memory", self, &reason), -1);
}

static void test_mountinfo_outside(void **state)
{
    (void)state;
    char dir[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    /* the host's cgroup is not under the mount's root */
    assert_int_equal(shx_cgroupfs_join("/sys/fs/cgroup", "/kubepods/pod12/abc", "/other", dir,
                                       &reason),
                     -1);
    assert_string_equal(reason, "the host's cgroup is outside the visible cgroup2 mount");
    /* a prefix that is not a path component */
    reason = NULL;
    assert_int_equal(shx_cgroupfs_join("/m", "/a", "/ab", dir, &reason), -1);
    assert_non_null(reason);
    /* a namespace entered from outside shows "/.." */
    assert_int_equal(shx_cgroupfs_join("/m", "/", "/../../x", dir, &reason), -1);
    assert_int_equal(shx_cgroupfs_join("/m", "/", "/a/..", dir, &reason), -1);
    /* ".." inside a name is no parent */
    assert_int_equal(shx_cgroupfs_join("/m", "/", "/a..b/..c", dir, &reason), 0);
    assert_string_equal(dir, "/m/a..b/..c");
    /* trailing slashes, and a mount at "/" */
    assert_int_equal(shx_cgroupfs_join("/m/", "/a/", "/a/b", dir, &reason), 0);
    assert_string_equal(dir, "/m/b");
    assert_int_equal(shx_cgroupfs_join("/", "/", "/x", dir, &reason), 0);
    assert_string_equal(dir, "/x");
    assert_int_equal(shx_cgroupfs_join("/", "/", "/", dir, &reason), 0);
    assert_string_equal(dir, "/");
    /* too long once joined */
    char *lng = malloc(SHX_CGROUP_PATH_MAX);
    assert_non_null(lng);
    memset(lng, 'a', SHX_CGROUP_PATH_MAX - 1);
    lng[0] = '/';
    lng[SHX_CGROUP_PATH_MAX - 20] = '\0';
    reason = NULL;
    assert_int_equal(shx_cgroupfs_join("/sys/fs/cgroup/unified", "/", lng, dir, &reason), -1);
    assert_non_null(reason);
    free(lng);
}

static void test_mountinfo_escapes(void **state)
{
    (void)state;
    static const char text[] =
        "50 1 0:40 /a\\040b /mnt/my\\040cg\\134x\\011t\\012n rw - cgroup2 none rw\n";
    char mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    assert_int_equal(shx_cgroupfs_mount(text, strlen(text), NULL, mount, root, &reason), 0);
    assert_string_equal(mount, "/mnt/my cg\\x\tt\nn");
    assert_string_equal(root, "/a b");
    /* a backslash not followed by three octal digits stays as it is */
    static const char plain[] = "50 1 0:40 / /m\\08\\1 rw - cgroup2 none rw\n";
    assert_int_equal(shx_cgroupfs_mount(plain, strlen(plain), NULL, mount, root, &reason), 0);
    assert_string_equal(mount, "/m\\08\\1");
    /* an escaped NUL cannot be a path */
    static const char nul[] = "50 1 0:40 / /m\\000 rw - cgroup2 none rw\n";
    assert_int_equal(shx_cgroupfs_mount(nul, strlen(nul), NULL, mount, root, &reason), -1);
    assert_string_equal(reason, "a malformed cgroup2 line in mountinfo");
}

static void test_mountinfo_several(void **state)
{
    (void)state;
    static const char text[] = "60 1 0:40 /a /first rw - cgroup2 cgroup2 rw\n"
                               "61 1 0:40 / /second rw shared:5 master:1 - cgroup2 cgroup2 rw\n"
                               "62 1 0:40 /b/c /third rw - cgroup2 cgroup2 rw\n";
    char mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    assert_int_equal(shx_cgroupfs_mount(text, strlen(text), "/a/x", mount, root, &reason), 0);
    assert_string_equal(mount, "/first");
    assert_int_equal(shx_cgroupfs_mount(text, strlen(text), "/ab", mount, root, &reason), 0);
    assert_string_equal(mount, "/second");
    assert_int_equal(shx_cgroupfs_mount(text, strlen(text), "/b/c", mount, root, &reason), 0);
    assert_string_equal(mount, "/second");
    /* none contains it: the first, which join then refuses */
    static const char two[] = "60 1 0:40 /a /first rw - cgroup2 cgroup2 rw\n"
                              "62 1 0:40 /b /third rw - cgroup2 cgroup2 rw\n";
    assert_int_equal(shx_cgroupfs_mount(two, strlen(two), "/z", mount, root, &reason), 0);
    assert_string_equal(mount, "/first");
    assert_string_equal(root, "/a");
}

static void test_mountinfo_none(void **state)
{
    (void)state;
    char mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    static const char *texts[] = {
        "",
        "\n\n\n",
        "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n",
        /* cgroup2 as the source or an option, not the type */
        "31 30 0:28 / /x rw - tmpfs cgroup2 rw\n",
        "31 30 0:28 / /x cgroup2 - tmpfs tmpfs rw\n",
        /* no separator, or nothing after it */
        "31 30 0:28 / /x rw cgroup2 cgroup2 rw\n",
        "31 30 0:28 / /x rw -\n",
        "cgroup2\n",
        "- cgroup2\n",
        "garbage \x01\x02\xff - \n\x7f",
    };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        reason = NULL;
        assert_int_equal(shx_cgroupfs_mount(texts[i], strlen(texts[i]), NULL, mount, root, &reason),
                         -1);
        assert_string_equal(reason, "no cgroup v2 mount");
    }
    /* a cgroup2 line without the paths it needs */
    static const char *bad[] = {"1 2 3 - cgroup2 x y\n", "1 2 3 rel /m o - cgroup2 x y\n"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(shx_cgroupfs_mount(bad[i], strlen(bad[i]), NULL, mount, root, &reason), -1);
        assert_non_null(reason);
    }
    /* a text cut anywhere never reads past its length */
    size_t n = strlen(pure_mountinfo);
    for (size_t cut = 0; cut < n; cut++) {
        char *copy = malloc(cut ? cut : 1);
        assert_non_null(copy);
        memcpy(copy, pure_mountinfo, cut);
        (void)shx_cgroupfs_mount(copy, cut, "/", mount, root, &reason);
        free(copy);
    }
}

static void test_mountinfo_huge(void **state)
{
    (void)state;
    char mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX], path[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    size_t big = SHX_CGROUPFS_MAX_TEXT + 1;
    char *text = malloc(big);
    assert_non_null(text);
    memset(text, 'x', big);
    assert_int_equal(shx_cgroupfs_mount(text, big, NULL, mount, root, &reason), -1);
    assert_string_equal(reason, "mountinfo is too long");
    assert_int_equal(shx_cgroupfs_self(text, big, path, &reason), -1);
    assert_int_equal(shx_cgroupfs_pids(text, big, NULL, 0), -1);
    assert_int_equal(errno, E2BIG);
    unsigned long long v;
    assert_int_equal(shx_cgroupfs_key(text, big, "x", &v), -1);
    /* just under the bound: many mounts and a cgroup2 last, in one pass */
    static const char filler[] = "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw\n";
    static const char last[] = "40 30 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
    size_t n = 0;
    while (n + sizeof filler + sizeof last < SHX_CGROUPFS_MAX_TEXT) {
        memcpy(text + n, filler, sizeof filler - 1);
        n += sizeof filler - 1;
    }
    memcpy(text + n, last, sizeof last - 1);
    n += sizeof last - 1;
    int64_t t0 = tu_now_ms();
    assert_int_equal(shx_cgroupfs_mount(text, n, "/", mount, root, &reason), 0);
    assert_string_equal(mount, "/sys/fs/cgroup/unified");
    /* one line as long as the whole text */
    memset(text, 'a', n);
    assert_int_equal(shx_cgroupfs_mount(text, n, "/", mount, root, &reason), -1);
    /* linear: milliseconds; a quadratic scan of this text would take hours
     * (the bound leaves room for a loaded machine under a sanitizer) */
    assert_true(tu_now_ms() - t0 < 60000);
    /* a path longer than PATH_MAX */
    size_t k = (size_t)snprintf(text, big, "1 2 3:4 / /");
    memset(text + k, 'p', SHX_CGROUP_PATH_MAX);
    k += SHX_CGROUP_PATH_MAX;
    k += (size_t)snprintf(text + k, big - k, " rw - cgroup2 cgroup2 rw\n");
    assert_int_equal(shx_cgroupfs_mount(text, k, NULL, mount, root, &reason), -1);
    k = (size_t)snprintf(text, big, "0::/");
    memset(text + k, 'p', SHX_CGROUP_PATH_MAX);
    k += SHX_CGROUP_PATH_MAX;
    assert_int_equal(shx_cgroupfs_self(text, k, path, &reason), -1);
    assert_string_equal(reason, "the host's cgroup path is too long");
    free(text);
}

static void test_self_cgroup(void **state)
{
    (void)state;
    char path[SHX_CGROUP_PATH_MAX];
    const char *reason = NULL;
    assert_int_equal(shx_cgroupfs_self(hybrid_cgroup, strlen(hybrid_cgroup), path, &reason), 0);
    assert_string_equal(path, "/");
    static const char v2[] = "0::/user.slice/a:b.scope";
    assert_int_equal(shx_cgroupfs_self(v2, strlen(v2), path, &reason), 0);
    assert_string_equal(path, "/user.slice/a:b.scope");
    /* hierarchy 10 is a v1 line, not the v2 one */
    static const char v1[] = "10::/x\n4:memory:/y\n";
    assert_int_equal(shx_cgroupfs_self(v1, strlen(v1), path, &reason), -1);
    assert_string_equal(reason, "the host is in no cgroup v2 (no 0:: line in /proc/self/cgroup)");
    assert_int_equal(shx_cgroupfs_self("", 0, path, &reason), -1);
    static const char deleted[] = "1:cpu:/\n0::/gone/x (deleted)\n";
    assert_int_equal(shx_cgroupfs_self(deleted, strlen(deleted), path, &reason), -1);
    assert_string_equal(reason, "the host's cgroup has been removed");
    static const char *bad[] = {"0::\n", "0::relative\n", "0::"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(shx_cgroupfs_self(bad[i], strlen(bad[i]), path, &reason), -1);
        assert_string_equal(reason, "a malformed cgroup v2 line in /proc/self/cgroup");
    }
    static const char with_nul[] = "0::/a\0b\n";
    assert_int_equal(shx_cgroupfs_self(with_nul, sizeof with_nul - 1, path, &reason), -1);
}

static void test_keyed_files(void **state)
{
    (void)state;
    unsigned long long v = 7;
    static const char events[] = "populated 1\nfrozen 0\n";
    assert_int_equal(shx_cgroupfs_key(events, strlen(events), "populated", &v), 1);
    assert_int_equal(v, 1);
    assert_int_equal(shx_cgroupfs_key(events, strlen(events), "frozen", &v), 1);
    assert_int_equal(v, 0);
    assert_int_equal(shx_cgroupfs_key(events, strlen(events), "popul", &v), 0);
    assert_int_equal(shx_cgroupfs_key("populated x\n", 12, "populated", &v), -1);
    assert_int_equal(shx_cgroupfs_key("populated 1 2\n", 14, "populated", &v), -1);
    assert_int_equal(shx_cgroupfs_key("populated\n", 10, "populated", &v), -1);
    assert_int_equal(shx_cgroupfs_key("populated 99999999999999999999\n", 31, "populated", &v), -1);
    assert_int_equal(shx_cgroupfs_key("populated 18446744073709551615", 30, "populated", &v), 1);
    assert_true(v == 18446744073709551615ull);
    static const char cpu[] = "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n"
                              "core_sched.force_idle_usec 0\nnr_periods 0\n";
    assert_int_equal(shx_cgroupfs_key(cpu, strlen(cpu), "user_usec", &v), 1);
    assert_int_equal(v, 100000);
    assert_int_equal(shx_cgroupfs_key(cpu, strlen(cpu), "system_usec", &v), 1);
    assert_int_equal(v, 23456);
    static const char mem[] = "low 0\nhigh 0\nmax 12\noom 3\noom_kill 2\noom_group_kill 0\n";
    assert_int_equal(shx_cgroupfs_key(mem, strlen(mem), "max", &v), 1);
    assert_int_equal(v, 12);
    assert_int_equal(shx_cgroupfs_key(mem, strlen(mem), "oom", &v), 1);
    assert_int_equal(v, 3);
    assert_int_equal(shx_cgroupfs_key(mem, strlen(mem), "oom_kill", &v), 1);
    assert_int_equal(v, 2);
    /* "max.imposed" is not "max" */
    static const char pids[] = "max.imposed 4\nmax 9\n";
    assert_int_equal(shx_cgroupfs_key(pids, strlen(pids), "max", &v), 1);
    assert_int_equal(v, 9);

    assert_int_equal(shx_cgroupfs_number("1048576\n", 8, &v), 0);
    assert_int_equal(v, 1048576);
    assert_int_equal(shx_cgroupfs_number("max\n", 4, &v), -1);
    assert_int_equal(shx_cgroupfs_number("", 0, &v), -1);
    assert_int_equal(shx_cgroupfs_number("12 13\n", 6, &v), -1);
}

static void test_controllers_and_pids(void **state)
{
    (void)state;
    static const char all[] = "cpuset cpu io memory hugetlb pids rdma misc\n";
    assert_int_equal(shx_cgroupfs_controllers(all, strlen(all)),
                     SHX_CGROUP_CPU | SHX_CGROUP_MEMORY | SHX_CGROUP_PIDS);
    assert_int_equal(shx_cgroupfs_controllers("hugetlb\n", 8), 0);
    assert_int_equal(shx_cgroupfs_controllers("cpuset memoryx\n", 15), 0);
    assert_int_equal(shx_cgroupfs_controllers("pids", 4), SHX_CGROUP_PIDS);
    assert_int_equal(shx_cgroupfs_controllers("", 0), 0);

    pid_t out[4];
    assert_int_equal(shx_cgroupfs_pids("1\n22\n333\n", 9, out, 4), 3);
    assert_int_equal(out[0], 1);
    assert_int_equal(out[1], 22);
    assert_int_equal(out[2], 333);
    assert_int_equal(shx_cgroupfs_pids("", 0, out, 4), 0);
    errno = 0;
    assert_int_equal(shx_cgroupfs_pids("1\n2\n3\n4\n5\n", 10, out, 4), -1);
    assert_int_equal(errno, ENOBUFS);
    assert_int_equal(out[3], 4);
    static const char *bad[] = {"1\nx\n", "0\n", "-1\n", "1 2\n", "\n", "99999999999\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        errno = 0;
        assert_int_equal(shx_cgroupfs_pids(bad[i], strlen(bad[i]), out, 4), -1);
        assert_int_equal(errno, EINVAL);
    }
}

/* ------------------------------------------------------------------------
 * Live, on this machine's cgroup2
 * ------------------------------------------------------------------------ */

#define MAX_KIDS 8
#define WAIT_MS 10000

typedef struct live {
    char parent[SHX_CGROUP_PATH_MAX]; /* the host's own cgroup */
    char dir[SHX_CGROUP_PATH_MAX];    /* the test's child cgroup, "" when none */
    shx_cgroup_probe probe;
    const char *skip_reason; /* why the live tests cannot run here */
    pid_t kids[MAX_KIDS];    /* children forked, until reaped */
    int nkids;
    int fds; /* descriptors open before the test */
} live;

static int live_setup(void **state)
{
    static unsigned counter;
    live *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    *state = t;
    t->fds = tu_count_fds();
    const char *reason = NULL;
    if (shx_cgroup_self_dir(NULL, t->parent, &reason) != 0) {
        t->skip_reason = reason;
        return 0;
    }
    if (shx_cgroup_probe_dir(t->parent, &t->probe) != 0) {
        t->skip_reason = t->probe.reason;
        return 0;
    }
    char name[64];
    (void)snprintf(name, sizeof name, "shexec-test-%d-%u", (int)getpid(), counter++);
    if (shx_cgroup_create(t->parent, name, t->dir) != 0) {
        t->dir[0] = '\0';
        t->skip_reason = "cannot make a child cgroup";
    }
    return 0;
}

/* Reap the children that have ended (all, waiting, when wait is set). */
static void reap(live *t, int wait)
{
    for (int i = 0; i < t->nkids;) {
        if (waitpid(t->kids[i], NULL, wait ? 0 : WNOHANG) == t->kids[i] || errno == ECHILD) {
            t->kids[i] = t->kids[--t->nkids];
            errno = 0;
        } else {
            i++;
        }
    }
}

/* Wait until count(t) is want (at_least: want or more), or WAIT_MS pass;
 * the children that end meanwhile are reaped. 1, or 0 on the timeout. */
static int wait_count(live *t, long (*count)(live *), long want, int at_least)
{
    int64_t end = tu_now_ms() + WAIT_MS;
    for (;;) {
        reap(t, 0);
        long n = count(t);
        if (n == want || (at_least && n > want))
            return 1;
        if (tu_now_ms() > end) {
            print_error("waited for %ld, have %ld\n", want, n);
            return 0;
        }
        struct timespec ms = {0, 2000000};
        nanosleep(&ms, NULL);
    }
}

static int wait_until(live *t, long (*count)(live *), long want)
{
    return wait_count(t, count, want, 0);
}

static long member_count(live *t)
{
    pid_t pids[64];
    return shx_cgroup_pids(t->dir, pids, 64);
}

/* The member count of dir once every member runs sleep (the trees have
 * settled: no shell nor subshell between fork and exec left), else -1. */
static long settled_in(const char *dir, pid_t *pids, long cap)
{
    long n = shx_cgroup_pids(dir, pids, (size_t)cap);
    for (long i = 0; i < n; i++) {
        char path[64], comm[32] = "";
        (void)snprintf(path, sizeof path, "/proc/%d/comm", (int)pids[i]);
        FILE *f = fopen(path, "re");
        if (f) {
            if (!fgets(comm, sizeof comm, f))
                comm[0] = '\0';
            fclose(f);
        }
        if (strcmp(comm, "sleep\n") != 0)
            return -1;
    }
    return n;
}

static long settled_count(live *t)
{
    pid_t pids[64];
    return settled_in(t->dir, pids, 64);
}

/* Wait for the tree spawned in dir (below the test's cgroup) to settle
 * with its three members, which are listed into below. */
static void wait_settled_below(const char *dir, pid_t below[8])
{
    long n = -1;
    for (int tries = 0; tries < 1000 && (n = settled_in(dir, below, 8)) != 3; tries++)
        usleep(10000);
    assert_int_equal(n, 3);
}

static long populated(live *t)
{
    return shx_cgroup_populated(t->dir);
}

static int live_teardown(void **state)
{
    live *t = *state;
    int ok = 1;
    if (t->dir[0]) {
        if (shx_cgroup_kill(t->dir, 1000) != 0 || !wait_until(t, populated, 0))
            ok = 0;
    }
    for (int i = 0; i < t->nkids; i++)
        (void)kill(t->kids[i], SIGKILL);
    reap(t, 1);
    /* with the cgroups below it a failed test may have left */
    char *buf = t->dir[0] ? malloc(SHX_CGTREE_BUF) : NULL;
    if (t->dir[0] && (!buf || shx_cgtree_end(t->dir, 1000, buf, SHX_CGTREE_BUF) != 0)) {
        print_error("cgroup %s left: %s\n", t->dir, strerror(errno));
        ok = 0;
    }
    if (tu_count_fds() != t->fds) {
        print_error("descriptor leak: %d open before, %d after\n", t->fds, tu_count_fds());
        ok = 0;
    }
    if (tu_count_children() != 0) {
        print_error("child process(es) left behind\n");
        ok = 0;
    }
    free(buf);
    free(t);
    return ok ? 0 : -1;
}

/* The live test's state, or a skip saying why there is none. */
static live *need_cgroup(void **state)
{
    live *t = *state;
    if (t->skip_reason) {
        print_message("skipped: cgroup v2 is not usable here: %s\n", t->skip_reason);
        skip();
    }
    return t;
}

/* Fork a child that moves itself into cgroup dir, leaves its session
 * (setsid) and runs script in sh (TERM ignored with ignore_term: ignored
 * signals stay ignored across exec). */
static pid_t spawn_tree_at(live *t, const char *dir, const char *script, int ignore_term)
{
    assert_true(t->nkids < MAX_KIDS);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (shx_cgroup_move(dir, 0) != 0)
            _exit(126);
        (void)setsid();
        if (ignore_term)
            (void)signal(SIGTERM, SIG_IGN);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    t->kids[t->nkids++] = pid;
    return pid;
}

/* The same in the test's cgroup. */
static pid_t spawn_tree(live *t, const char *script, int ignore_term)
{
    return spawn_tree_at(t, t->dir, script, ignore_term);
}

/* Three processes: the shell become sleep, a background sleep, and a
 * double-forked one that init adopts. */
static const char tree[] = "(sleep 300 &); sleep 300 & exec sleep 300";

static void test_live_self_dir(void **state)
{
    live *t = need_cgroup(state);
    char path[SHX_CGROUP_PATH_MAX + 32];
    struct stat st;
    (void)snprintf(path, sizeof path, "%s/cgroup.procs", t->parent);
    assert_int_equal(stat(path, &st), 0);
    print_message("host cgroup: %s (cgroup.kill %s, freezer %s, controllers %#x, subtree %#x)\n",
                  t->parent, t->probe.kill ? "yes" : "no", t->probe.freeze ? "yes" : "no",
                  t->probe.controllers, t->probe.subtree);
    assert_int_equal(t->probe.writable, 1);
    assert_int_equal(shx_cgroup_populated(t->dir), 0);
    pid_t pids[4];
    assert_int_equal(shx_cgroup_pids(t->dir, pids, 4), 0);
    /* not a cgroup directory */
    shx_cgroup_probe p;
    errno = 0;
    assert_int_equal(shx_cgroup_probe_dir("/", &p), -1);
    assert_int_equal(errno, ENOENT);
    assert_string_equal(p.reason, "not a cgroup v2 directory");
}

/* Members listed whatever their session; SIGTERM to all; the rest killed. */
static void test_live_term_then_kill(void **state)
{
    live *t = need_cgroup(state);
    pid_t a = spawn_tree(t, tree, 0);
    pid_t b = spawn_tree(t, tree, 1);
    assert_true(wait_until(t, settled_count, 6));
    pid_t pids[16];
    long n = shx_cgroup_pids(t->dir, pids, 16);
    assert_int_equal(n, 6);
    int found_a = 0, found_b = 0;
    for (long i = 0; i < n; i++) {
        found_a += pids[i] == a;
        found_b += pids[i] == b;
        assert_true(getsid(pids[i]) != getsid(0));
    }
    assert_int_equal(found_a + found_b, 2);
    pid_t few[2];
    errno = 0;
    assert_int_equal(shx_cgroup_pids(t->dir, few, 2), -1);
    assert_int_equal(errno, ENOBUFS);
    assert_int_equal(shx_cgroup_populated(t->dir), 1);
    /* a cgroup with members cannot be removed */
    assert_int_equal(shx_cgroup_remove(t->dir), -1);
    assert_int_equal(errno, EBUSY);

    assert_int_equal(shx_cgroup_signal(t->dir, SIGTERM, 0), 6);
    assert_true(wait_until(t, member_count, 3)); /* the tree that ignores TERM */
    /* a process leaves its cgroup early in its exit, before it is a zombie */
    assert_true(tu_wait_pid_gone(a, WAIT_MS));
    assert_true(tu_pid_alive(b));

    assert_int_equal(shx_cgroup_kill(t->dir, 1000), 0);
    assert_true(wait_until(t, populated, 0));
    for (long i = 0; i < n; i++)
        assert_true(tu_wait_pid_gone(pids[i], WAIT_MS));
    reap(t, 1);
    assert_int_equal(shx_cgroup_remove(t->dir), 0);
    assert_int_equal(shx_cgroup_remove(t->dir), -1);
    assert_int_equal(errno, ENOENT);
    t->dir[0] = '\0';
}

/* The kill for kernels without cgroup.kill, on the same kind of trees. */
static void test_live_freeze_fallback(void **state)
{
    live *t = need_cgroup(state);
    if (!t->probe.freeze) {
        print_message("skipped: no cgroup.freeze here (Linux before 5.2)\n");
        skip();
    }
    /* and one in a cgroup below: the freeze and the kill reach it */
    char inner[SHX_CGROUP_PATH_MAX];
    assert_int_equal(shx_cgroup_create(t->dir, "inner", inner), 0);
    spawn_tree_at(t, inner, tree, 1);
    pid_t below[8];
    const long nbelow = 3;
    wait_settled_below(inner, below);
    spawn_tree(t, tree, 1);
    spawn_tree(t, "trap '' TERM; while :; do (sleep 300 &); sleep 1; done", 1);
    assert_true(wait_count(t, member_count, 5, 1));
    /* the loop's members come and go (a subshell, `sleep 1`): list until
     * the count seen above is there again */
    pid_t pids[64];
    long n = 0;
    for (int tries = 0; tries < 200 && (n = shx_cgroup_pids(t->dir, pids, 64)) < 5; tries++)
        usleep(10000);
    assert_true(n >= 5);
    assert_int_equal(shx_cgroup_kill_frozen(t->dir, 1000), 0);
    /* none listed on return, and thawed */
    assert_int_equal(member_count(t), 0);
    assert_true(wait_until(t, populated, 0));
    for (long i = 0; i < n; i++)
        assert_true(tu_wait_pid_gone(pids[i], WAIT_MS));
    for (long i = 0; i < nbelow; i++)
        assert_true(tu_wait_pid_gone(below[i], WAIT_MS));
    char path[SHX_CGROUP_PATH_MAX + 32];
    (void)snprintf(path, sizeof path, "%s/cgroup.freeze", t->dir);
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    assert_int_equal(fgetc(f), '0');
    fclose(f);
    /* an empty cgroup: nothing to do */
    assert_int_equal(shx_cgroup_kill_frozen(t->dir, 100), 0);
}

/* cpu.stat needs no controller: a busy member's time is counted. */
static void test_live_cpu_stat(void **state)
{
    live *t = need_cgroup(state);
    shx_cgroup_cpu before;
    assert_int_equal(shx_cgroup_read_cpu(t->dir, &before), 0);
    assert_true(t->nkids < MAX_KIDS);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (shx_cgroup_move(t->dir, 0) != 0)
            _exit(126);
        /* user time mostly: clock() is a system call, so a loop of it alone
         * could be counted as system time to the last tick */
        clock_t end = clock() + CLOCKS_PER_SEC / 5;
        volatile unsigned long spin = 0;
        while (clock() < end)
            for (int i = 0; i < 100000; i++)
                spin++;
        _exit(0);
    }
    t->kids[t->nkids++] = pid;
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    t->nkids--;
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    shx_cgroup_cpu after;
    assert_int_equal(shx_cgroup_read_cpu(t->dir, &after), 0);
    print_message("cpu.stat: usage %llu user %llu system %llu usec\n", after.usage_usec,
                  after.user_usec, after.system_usec);
    assert_true(after.usage_usec > before.usage_usec);
    assert_true(after.usage_usec >= 50000);
    assert_true(after.user_usec > 0);
}

/* Limits and accounting of controllers not enabled for the cgroup. */
static void test_live_limits(void **state)
{
    live *t = need_cgroup(state);
    const char *reason = NULL;
    if (!(t->probe.subtree & SHX_CGROUP_MEMORY)) {
        assert_int_equal(shx_cgroup_set_limit(t->dir, "memory.max", "100M", &reason), -1);
        assert_int_equal(errno, ENOENT);
        assert_string_equal(reason, "the controller is not enabled for this cgroup");
        unsigned long long peak;
        assert_int_equal(shx_cgroup_read_peak(t->dir, &peak), -1);
        assert_int_equal(errno, ENOENT);
    } else {
        assert_int_equal(shx_cgroup_set_limit(t->dir, "memory.max", "100M", &reason), 0);
        assert_int_equal(shx_cgroup_set_limit(t->dir, "memory.max", "lots", &reason), -1);
        assert_int_equal(errno, EINVAL);
    }
    if (!(t->probe.subtree & SHX_CGROUP_PIDS)) {
        assert_int_equal(shx_cgroup_set_limit(t->dir, "pids.max", "10", &reason), -1);
        assert_int_equal(errno, ENOENT);
        unsigned long long v;
        assert_int_equal(shx_cgroup_read_pids_max(t->dir, &v), -1);
        assert_int_equal(errno, ENOENT);
    }
    /* a value the kernel refuses (this limit file needs no controller) */
    reason = NULL;
    assert_int_equal(shx_cgroup_set_limit(t->dir, "cgroup.max.descendants", "lots", &reason), -1);
    assert_int_equal(errno, EINVAL);
    assert_string_equal(reason, "the kernel refused the value");
    assert_int_equal(shx_cgroup_set_limit(t->dir, "cgroup.max.descendants", "5", &reason), 0);
    assert_int_equal(shx_cgroup_set_limit(t->dir, "../cgroup.procs", "1", &reason), -1);
    assert_int_equal(errno, EINVAL);
    assert_string_equal(reason, "not a cgroup file name");
}

static void test_live_create_and_move_errors(void **state)
{
    live *t = need_cgroup(state);
    const char *name = strrchr(t->dir, '/') + 1;
    char other[SHX_CGROUP_PATH_MAX];
    assert_int_equal(shx_cgroup_create(t->parent, name, other), -1);
    assert_int_equal(errno, EEXIST);
    static const char *bad[] = {"", ".", "..", "a/b"};
    for (size_t i = 0; i < 4; i++) {
        errno = 0;
        assert_int_equal(shx_cgroup_create(t->dir, bad[i], other), -1);
        assert_int_equal(errno, EINVAL);
    }
    /* a child of the test's cgroup: the parent is then busy */
    assert_int_equal(shx_cgroup_create(t->dir, "inner", other), 0);
    assert_int_equal(shx_cgroup_remove(t->dir), -1);
    assert_int_equal(errno, EBUSY);
    assert_int_equal(shx_cgroup_remove(other), 0);
    /* a pid with no process */
    assert_int_equal(shx_cgroup_move(t->dir, 0x3ffffffe), -1);
    assert_int_equal(errno, ESRCH);
    /* a cgroup that is not there */
    char gone[SHX_CGROUP_PATH_MAX + 8];
    (void)snprintf(gone, sizeof gone, "%s/none", t->dir);
    assert_int_equal(shx_cgroup_populated(gone), -1);
    assert_int_equal(errno, ENOENT);
    shx_cgroup_cpu c;
    assert_int_equal(shx_cgroup_read_cpu(gone, &c), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(shx_cgroup_signal(gone, SIGTERM, 0), -1);
    assert_int_equal(errno, ENOENT);
}

/* dir/name, made (a cgroup below dir); its path into out. */
static void make_below(const char *dir, const char *name, char out[SHX_CGROUP_PATH_MAX])
{
    assert_int_equal(shx_cgroup_create(dir, name, out), 0);
}

/* A tree below the test's cgroup: signalled, killed and removed as one,
 * what has members kept by a removal, the rest removed. */
static void test_live_tree(void **state)
{
    live *t = need_cgroup(state);
    char a[SHX_CGROUP_PATH_MAX], b[SHX_CGROUP_PATH_MAX], c[SHX_CGROUP_PATH_MAX];
    make_below(t->dir, "a", a);
    make_below(a, "b", b);
    make_below(t->dir, "c", c);
    spawn_tree(t, tree, 0);
    spawn_tree_at(t, b, tree, 1);
    assert_true(wait_until(t, settled_count, 3));
    pid_t below[8];
    const long n = 3;
    wait_settled_below(b, below);
    /* SIGTERM to every member of the tree: those two below too */
    assert_int_equal(shx_cgroup_signal(t->dir, SIGTERM, 0), 6);
    assert_true(wait_until(t, member_count, 0));
    char *buf = malloc(SHX_CGTREE_BUF);
    assert_non_null(buf);
    assert_int_equal(shx_cgtree_populated(t->dir, buf, SHX_CGTREE_BUF), 1);
    /* the members that ignore TERM hold b and its parents; c goes */
    errno = 0;
    assert_int_equal(shx_cgtree_remove(t->dir, buf, SHX_CGTREE_BUF), -1);
    assert_int_equal(errno, EBUSY);
    struct stat st;
    assert_int_not_equal(stat(c, &st), 0);
    assert_int_equal(stat(b, &st), 0);
    /* the end of the tree: killed, waited for, removed */
    assert_int_equal(shx_cgtree_end(t->dir, WAIT_MS, buf, SHX_CGTREE_BUF), 0);
    assert_int_not_equal(stat(t->dir, &st), 0);
    for (long i = 0; i < n; i++)
        assert_true(tu_wait_pid_gone(below[i], WAIT_MS));
    assert_int_equal(shx_cgtree_populated(t->dir, buf, SHX_CGTREE_BUF), -1);
    assert_int_equal(shx_cgtree_remove(t->dir, buf, SHX_CGTREE_BUF), 0); /* gone: nothing to do */
    free(buf);
    t->dir[0] = '\0';
}

/* A wide tree walked with the smallest buffer: many listings, each taken
 * up again after a child's removal. */
static void test_live_tree_wide(void **state)
{
    live *t = need_cgroup(state);
    char w[SHX_CGROUP_PATH_MAX], sub[SHX_CGROUP_PATH_MAX], name[16];
    make_below(t->dir, "w", w);
    for (int i = 0; i < 60; i++) {
        (void)snprintf(name, sizeof name, "s%d", i);
        make_below(w, name, sub);
        make_below(sub, "x", sub);
    }
    char small[1024];
    errno = 0;
    assert_int_equal(shx_cgtree_remove(w, small, 512), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(shx_cgtree_remove(w, small, sizeof small), 0);
    struct stat st;
    assert_int_not_equal(stat(w, &st), 0);
}

/* A chain deeper than a walk goes is left, and the walk ends. */
static void test_live_tree_depth_bound(void **state)
{
    live *t = need_cgroup(state);
    enum { DEEP = SHX_CGTREE_DEPTH + 3 };
    static char level[DEEP + 1][SHX_CGROUP_PATH_MAX];
    (void)snprintf(level[0], sizeof level[0], "%s", t->dir);
    for (int i = 1; i <= DEEP; i++)
        make_below(level[i - 1], "d", level[i]);
    char *buf = malloc(SHX_CGTREE_BUF);
    assert_non_null(buf);
    errno = 0;
    int rc = shx_cgtree_remove(t->dir, buf, SHX_CGTREE_BUF);
    int err = errno;
    struct stat st;
    int deepest_left = stat(level[DEEP], &st) == 0;
    /* the levels past the bound, by hand; then the rest is within reach */
    for (int i = DEEP; i > SHX_CGTREE_DEPTH; i--)
        (void)shx_cgroup_remove(level[i]);
    int rest = shx_cgtree_remove(t->dir, buf, SHX_CGTREE_BUF);
    free(buf);
    assert_int_equal(rc, -1);
    assert_int_equal(err, EBUSY);
    assert_true(deepest_left);
    assert_int_equal(rest, 0);
    t->dir[0] = '\0';
}

#define LIVE_TEST(f) cmocka_unit_test_setup_teardown(f, live_setup, live_teardown)
#define LIVE_TESTS                                                                                 \
    LIVE_TEST(test_live_self_dir), LIVE_TEST(test_live_term_then_kill),                            \
        LIVE_TEST(test_live_freeze_fallback), LIVE_TEST(test_live_cpu_stat),                       \
        LIVE_TEST(test_live_limits), LIVE_TEST(test_live_create_and_move_errors),              \
        LIVE_TEST(test_live_tree), LIVE_TEST(test_live_tree_wide),                                 \
        LIVE_TEST(test_live_tree_depth_bound)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mountinfo_kinds),
        cmocka_unit_test(test_v1_hierarchies),
        cmocka_unit_test(test_mountinfo_outside),
        cmocka_unit_test(test_mountinfo_escapes),
        cmocka_unit_test(test_mountinfo_several),
        cmocka_unit_test(test_mountinfo_none),
        cmocka_unit_test(test_mountinfo_huge),
        cmocka_unit_test(test_self_cgroup),
        cmocka_unit_test(test_keyed_files),
        cmocka_unit_test(test_controllers_and_pids),
        LIVE_TESTS,
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
