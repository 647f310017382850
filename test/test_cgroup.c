/*
 * test_cgroup.c - the cgroup v2 file parsers on texts: hybrid, pure v2 and
 * container mountinfos, escapes, several mounts, a removed or missing
 * cgroup, the keyed files and lists, garbage and oversized input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupfs.h"
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
    assert_true(tu_now_ms() - t0 < 5000);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mountinfo_kinds),
        cmocka_unit_test(test_mountinfo_outside),
        cmocka_unit_test(test_mountinfo_escapes),
        cmocka_unit_test(test_mountinfo_several),
        cmocka_unit_test(test_mountinfo_none),
        cmocka_unit_test(test_mountinfo_huge),
        cmocka_unit_test(test_self_cgroup),
        cmocka_unit_test(test_keyed_files),
        cmocka_unit_test(test_controllers_and_pids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
