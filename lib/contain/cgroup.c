/*
 * cgroup.c - cgroup v2 directories (see cgroup.h). The calls are plain
 * POSIX file operations on the cgroup2 file system; where the build has no
 * /proc (not Linux) each fails with ENOSYS at its top, and the compiler
 * drops the rest.
 */
#include "contain/cgroup.h"
#include "contain/cgroupfs.h"

#include "shx_config.h"
#include "contain/cgtree.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char compiled_out[] = "cgroups are not in this build";

/* -1 with errno err (and *reason, when asked for, to why). */
static int fail(int err, const char **reason, const char *why)
{
    if (reason)
        *reason = why;
    errno = err;
    return -1;
}

/* dir/file into out; 0, or -1 with ENAMETOOLONG. Async-signal-safe. */
static int join(const char *dir, const char *file, char out[SHX_CGROUP_PATH_MAX])
{
    size_t dn = strlen(dir), fn = strlen(file);
    if (dn + 1 + fn >= SHX_CGROUP_PATH_MAX)
        return fail(ENAMETOOLONG, NULL, NULL);
    memcpy(out, dir, dn + 1);
    out[dn] = '/';
    memcpy(out + dn + 1, file, fn + 1);
    return 0;
}

/* All of path's text (at most SHX_CGROUPFS_MAX_TEXT bytes) into a malloc'd
 * *text of *len bytes, NUL-terminated. 0, or -1 with errno (E2BIG: longer). */
static int read_text(const char *path, char **text, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (cap - n < 2) {
            char *grown = cap > SHX_CGROUPFS_MAX_TEXT ? NULL : realloc(buf, cap * 2);
            if (!grown) {
                int err = cap > SHX_CGROUPFS_MAX_TEXT ? E2BIG : ENOMEM;
                free(buf);
                close(fd);
                return fail(err, NULL, NULL);
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int err = errno;
            free(buf);
            close(fd);
            return fail(err, NULL, NULL);
        }
        /* a cgroup file is made whole at its first read (seq_file), which
         * fills what it is given: a shorter read is its end */
        if (r == 0 || (size_t)r < cap - n - 1) {
            n += (size_t)r;
            close(fd);
            buf[n] = '\0';
            *text = buf;
            *len = n;
            return 0;
        }
        n += (size_t)r;
    }
    close(fd);
    return fail(ENOMEM, NULL, NULL);
}

/* dir/file's text, as read_text. */
static int read_file(const char *dir, const char *file, char **text, size_t *len)
{
    char path[SHX_CGROUP_PATH_MAX];
    if (join(dir, file, path) != 0)
        return -1;
    return read_text(path, text, len);
}

/* Write text to dir/file in one write(), as the cgroup files want. 0, or -1
 * with the kernel's errno. Async-signal-safe. */
static int write_file(const char *dir, const char *file, const char *text)
{
    char path[SHX_CGROUP_PATH_MAX];
    if (join(dir, file, path) != 0)
        return -1;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = strlen(text);
    ssize_t w;
    do
        w = write(fd, text, n);
    while (w < 0 && errno == EINTR);
    int err = w < 0 ? errno : (size_t)w != n ? EIO : 0;
    close(fd);
    return err ? fail(err, NULL, NULL) : 0;
}

/* 1 when dir/file exists. */
static int has_file(const char *dir, const char *file)
{
    char path[SHX_CGROUP_PATH_MAX];
    return join(dir, file, path) == 0 && access(path, F_OK) == 0;
}

int shx_cgroup_self_dir(const char *controller, char dir[SHX_CGROUP_PATH_MAX], const char **reason)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, reason, compiled_out);
    char *mi = NULL, *cg = NULL;
    size_t mi_len = 0, cg_len = 0;
    if (read_text("/proc/self/cgroup", &cg, &cg_len) != 0)
        return fail(errno, reason, "cannot read /proc/self/cgroup");
    if (read_text("/proc/self/mountinfo", &mi, &mi_len) != 0) {
        int err = errno;
        free(cg);
        return fail(err, reason, "cannot read /proc/self/mountinfo");
    }
    char self[SHX_CGROUP_PATH_MAX], mount[SHX_CGROUP_PATH_MAX], root[SHX_CGROUP_PATH_MAX];
    const char *why = NULL;
    int rc = shx_cgroupfs_v1_self(cg, cg_len, controller, self, &why) == 0 &&
                     shx_cgroupfs_v1_mount(mi, mi_len, controller, self, mount, root, &why) == 0 &&
                     shx_cgroupfs_join(mount, root, self, dir, &why) == 0
                 ? 0
                 : fail(ENOENT, reason, why);
    free(mi);
    free(cg);
    return rc;
}

/* v in decimal at out; past its last digit. */
static char *put_decimal(char *out, unsigned long v)
{
    char digits[24];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n > 0)
        *out++ = digits[--n];
    return out;
}

/* The name of a probe's child: this process's and this probe's, so that
 * concurrent probes (of several hosts, or threads) never collide. */
static void probe_name(char out[64])
{
    static atomic_uint probes;
    static const char prefix[] = "shexec-probe-";
    memcpy(out, prefix, sizeof prefix - 1);
    char *p = put_decimal(out + sizeof prefix - 1, (unsigned long)getpid());
    *p++ = '-';
    p = put_decimal(p, atomic_fetch_add(&probes, 1));
    *p = '\0';
}

/* The SHX_CGROUP_* dir/file lists, 0 when it cannot be read. */
static unsigned read_controllers(const char *dir, const char *file)
{
    char *text;
    size_t len;
    if (read_file(dir, file, &text, &len) != 0)
        return 0;
    unsigned bits = shx_cgroupfs_controllers(text, len);
    free(text);
    return bits;
}

int shx_cgroup_probe_dir(const char *parent, shx_cgroup_probe *out)
{
    memset(out, 0, sizeof *out);
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, &out->reason, compiled_out);
    if (!has_file(parent, "cgroup.procs") || !has_file(parent, "cgroup.controllers"))
        return fail(ENOENT, &out->reason, "not a cgroup v2 directory");
    out->controllers = read_controllers(parent, "cgroup.controllers");
    out->subtree = read_controllers(parent, "cgroup.subtree_control");
    char name[64], child[SHX_CGROUP_PATH_MAX];
    probe_name(name);
    if (shx_cgroup_create(parent, name, child) != 0) {
        int err = errno;
        const char *why = err == EROFS                     ? "the cgroup2 mount is read-only"
                          : err == EACCES || err == EPERM ? "no permission to make a cgroup here"
                                                          : "cannot make a cgroup here";
        return fail(err, &out->reason, why);
    }
    out->kill = has_file(child, "cgroup.kill");
    out->freeze = has_file(child, "cgroup.freeze");
    if (shx_cgroup_remove(child) != 0)
        return fail(errno, &out->reason, "cannot remove a cgroup made here");
    out->writable = 1;
    if (!out->kill && !out->freeze)
        return fail(ENOTSUP, &out->reason, "no cgroup.kill nor cgroup.freeze (Linux before 5.2)");
    if (!out->kill)
        out->reason = "no cgroup.kill (Linux before 5.14): kills go through the freezer";
    return 0;
}

int shx_cgroup_create(const char *parent, const char *name, char dir[SHX_CGROUP_PATH_MAX])
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    if (!*name || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return fail(EINVAL, NULL, NULL);
    if (join(parent, name, dir) != 0)
        return -1;
    return mkdir(dir, 0755);
}

int shx_cgroup_remove(const char *dir)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    return rmdir(dir);
}

int shx_cgroup_move(const char *dir, pid_t pid)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    /* the decimal by hand: snprintf is not async-signal-safe */
    char text[24];
    *put_decimal(text, pid > 0 ? (unsigned long)pid : 0) = '\0';
    return write_file(dir, "cgroup.procs", text);
}

int shx_cgroup_read_key(const char *dir, const char *file, const char *key,
                        unsigned long long *value)
{
    char *text;
    size_t len;
    if (read_file(dir, file, &text, &len) != 0)
        return -1;
    int found = shx_cgroupfs_key(text, len, key, value);
    free(text);
    return found == 1 ? 0 : fail(EINVAL, NULL, NULL);
}

int shx_cgroup_populated(const char *dir)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    unsigned long long v;
    if (shx_cgroup_read_key(dir, "cgroup.events", "populated", &v) != 0)
        return -1;
    return v != 0;
}

long shx_cgroup_pids(const char *dir, pid_t *out, size_t cap)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    char *text;
    size_t len;
    if (read_file(dir, "cgroup.procs", &text, &len) != 0)
        return -1;
    long n = shx_cgroupfs_pids(text, len, out, cap);
    int err = errno;
    free(text);
    errno = err;
    return n;
}

long shx_cgroup_signal(const char *dir, int sig, pid_t except_pgid)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    char *buf = malloc(SHX_CGTREE_BUF);
    if (!buf)
        return fail(ENOMEM, NULL, NULL);
    long sent = shx_cgtree_signal(dir, sig, except_pgid, buf, SHX_CGTREE_BUF);
    int err = errno;
    free(buf);
    errno = err;
    return sent;
}

int shx_cgroup_kill(const char *dir, int wait_ms)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    if (write_file(dir, "cgroup.kill", "1") == 0)
        return 0;
    if (errno != ENOENT)
        return -1;
    return shx_cgroup_kill_frozen(dir, wait_ms);
}

int shx_cgroup_kill_frozen(const char *dir, int wait_ms)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    if (!has_file(dir, "cgroup.freeze"))
        return fail(ENOENT, NULL, NULL);
    char *buf = malloc(SHX_CGTREE_BUF);
    if (!buf)
        return fail(ENOMEM, NULL, NULL);
    int rc = shx_cgtree_kill_listed(dir, wait_ms, buf, SHX_CGTREE_BUF);
    int err = errno;
    free(buf);
    errno = err;
    return rc;
}

int shx_cgroup_read_cpu(const char *dir, shx_cgroup_cpu *out)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    char *text;
    size_t len;
    if (read_file(dir, "cpu.stat", &text, &len) != 0)
        return -1;
    int ok = shx_cgroupfs_key(text, len, "usage_usec", &out->usage_usec) == 1 &&
             shx_cgroupfs_key(text, len, "user_usec", &out->user_usec) == 1 &&
             shx_cgroupfs_key(text, len, "system_usec", &out->system_usec) == 1;
    free(text);
    return ok ? 0 : fail(EINVAL, NULL, NULL);
}

int shx_cgroup_read_peak(const char *dir, unsigned long long *peak)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    char *text;
    size_t len;
    if (read_file(dir, "memory.peak", &text, &len) != 0)
        return -1;
    int ok = shx_cgroupfs_number(text, len, peak) == 0;
    free(text);
    return ok ? 0 : fail(EINVAL, NULL, NULL);
}

int shx_cgroup_read_pids_max(const char *dir, unsigned long long *max)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, NULL, NULL);
    return shx_cgroup_read_key(dir, "pids.events", "max", max);
}

int shx_cgroup_set_limit(const char *dir, const char *file, const char *value,
                         const char **reason)
{
    if (!SHX_HAVE_PROCFS)
        return fail(ENOSYS, reason, compiled_out);
    if (!*file || strchr(file, '/') || file[0] == '.')
        return fail(EINVAL, reason, "not a cgroup file name");
    if (write_file(dir, file, value) == 0)
        return 0;
    int err = errno;
    return fail(err, reason,
                err == ENOENT   ? "the controller is not enabled for this cgroup"
                : err == EINVAL ? "the kernel refused the value"
                : err == EACCES || err == EPERM ? "no permission to set this limit"
                                                : "cannot write the limit");
}
