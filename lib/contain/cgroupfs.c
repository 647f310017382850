/*
 * cgroupfs.c - cgroup v2 file texts parsed (see cgroupfs.h). Plain C on
 * buffers: it compiles and is tested on every platform.
 */
#include "contain/cgroupfs.h"

#include <errno.h>
#include <string.h>

/* One line of text: [s, s + n), without its newline. */
typedef struct line {
    const char *s;
    size_t n;
} line;

/* The next line at *pos of text into *out; 0 at the end. */
static int next_line(const char *text, size_t len, size_t *pos, line *out)
{
    if (*pos >= len)
        return 0;
    const char *s = text + *pos;
    const char *nl = memchr(s, '\n', len - *pos);
    size_t n = nl ? (size_t)(nl - s) : len - *pos;
    out->s = s;
    out->n = n;
    *pos += n + (nl != NULL);
    return 1;
}

/* The next space-separated field of l at *pos (mountinfo separates fields
 * by one space; its paths escape theirs). 0 when there is none. */
static int next_field(const line *l, size_t *pos, line *out)
{
    while (*pos < l->n && l->s[*pos] == ' ')
        (*pos)++;
    if (*pos >= l->n)
        return 0;
    size_t start = *pos;
    while (*pos < l->n && l->s[*pos] != ' ')
        (*pos)++;
    out->s = l->s + start;
    out->n = *pos - start;
    return 1;
}

static int is(const line *f, const char *word)
{
    size_t n = strlen(word);
    return f->n == n && memcmp(f->s, word, n) == 0;
}

static int is_octal(char c)
{
    return c >= '0' && c <= '7';
}

/* Field f with mountinfo's \ooo escapes decoded into out (NUL-terminated).
 * 0, or -1: too long, or an escape that stands for NUL. */
static int unescape(const line *f, char out[SHX_CGROUP_PATH_MAX])
{
    size_t o = 0;
    for (size_t i = 0; i < f->n; i++) {
        char c = f->s[i];
        if (c == '\\' && f->n - i > 3 && is_octal(f->s[i + 1]) && is_octal(f->s[i + 2]) &&
            is_octal(f->s[i + 3])) {
            int v = (f->s[i + 1] - '0') * 64 + (f->s[i + 2] - '0') * 8 + (f->s[i + 3] - '0');
            if (v == 0 || v > 255)
                return -1;
            c = (char)v;
            i += 3;
        }
        if (o + 1 >= SHX_CGROUP_PATH_MAX)
            return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

/* 1 when cgroup path root is path or one of its ancestors. */
static int path_under(const char *root, const char *path)
{
    size_t n = strlen(root);
    while (n > 1 && root[n - 1] == '/')
        n--;
    if (n == 1 && root[0] == '/')
        return path[0] == '/';
    return strncmp(root, path, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* 1 when the comma-separated list f names word. */
static int lists(const line *f, const char *word)
{
    size_t n = strlen(word);
    for (size_t i = 0; i + n <= f->n; i++)
        if ((i == 0 || f->s[i - 1] == ',') && memcmp(f->s + i, word, n) == 0 &&
            (i + n == f->n || f->s[i + n] == ','))
            return 1;
    return 0;
}

/* The mount's kind: cgroup2 (controller NULL), or a cgroup v1 hierarchy
 * whose super options name controller. */
static int wanted_mount(const line *fstype, const line *super, const char *controller)
{
    if (!controller)
        return is(fstype, "cgroup2");
    return is(fstype, "cgroup") && super->s && lists(super, controller);
}

int shx_cgroupfs_mount(const char *text, size_t len, const char *self,
                       char mount[SHX_CGROUP_PATH_MAX], char root[SHX_CGROUP_PATH_MAX],
                       const char **reason)
{
    return shx_cgroupfs_v1_mount(text, len, NULL, self, mount, root, reason);
}

int shx_cgroupfs_v1_mount(const char *text, size_t len, const char *controller, const char *self,
                          char mount[SHX_CGROUP_PATH_MAX], char root[SHX_CGROUP_PATH_MAX],
                          const char **reason)
{
    if (len > SHX_CGROUPFS_MAX_TEXT) {
        *reason = "mountinfo is too long";
        return -1;
    }
    int found = 0;
    size_t pos = 0;
    line l;
    while (next_line(text, len, &pos, &l)) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
        line f, froot = {NULL, 0}, fmount = {NULL, 0}, ftype = {NULL, 0}, fsuper = {NULL, 0};
        size_t fp = 0;
        int k = 0, dash = 0;
        while (next_field(&l, &fp, &f)) {
            k++;
            if (k == 4)
                froot = f;
            else if (k == 5)
                fmount = f;
            else if (k > 6 && !dash && is(&f, "-"))
                dash = k;
            else if (dash && k == dash + 1)
                ftype = f;
            else if (dash && k == dash + 3)
                fsuper = f;
        }
        if (!ftype.s || !wanted_mount(&ftype, &fsuper, controller))
            continue;
        char m[SHX_CGROUP_PATH_MAX], r[SHX_CGROUP_PATH_MAX];
        if (unescape(&fmount, m) != 0 || unescape(&froot, r) != 0 || m[0] != '/' || r[0] != '/') {
            *reason = controller ? "a malformed cgroup line in mountinfo"
                                 : "a malformed cgroup2 line in mountinfo";
            return -1;
        }
        int preferred = self && path_under(r, self);
        if (!found || preferred) {
            memcpy(mount, m, strlen(m) + 1);
            memcpy(root, r, strlen(r) + 1);
            found = 1;
        }
        if (preferred)
            return 0;
    }
    if (!found) {
        *reason = controller ? "no cgroup v1 mount of the controller" : "no cgroup v2 mount";
        return -1;
    }
    return 0;
}

/* Line l's path if it is the v2 line ("0::PATH"; controller NULL) or the
 * v1 line of a hierarchy that holds controller ("N:LIST:PATH"), else NULL. */
static const char *line_path(const line *l, const char *controller, size_t *n)
{
    if (!controller) {
        if (l->n < 3 || memcmp(l->s, "0::", 3) != 0)
            return NULL;
        *n = l->n - 3;
        return l->s + 3;
    }
    const char *c1 = memchr(l->s, ':', l->n);
    const char *c2 = c1 ? memchr(c1 + 1, ':', l->n - (size_t)(c1 + 1 - l->s)) : NULL;
    if (!c2)
        return NULL;
    line list = {c1 + 1, (size_t)(c2 - c1 - 1)};
    if (!lists(&list, controller))
        return NULL;
    *n = l->n - (size_t)(c2 + 1 - l->s);
    return c2 + 1;
}

int shx_cgroupfs_self(const char *text, size_t len, char path[SHX_CGROUP_PATH_MAX],
                      const char **reason)
{
    return shx_cgroupfs_v1_self(text, len, NULL, path, reason);
}

int shx_cgroupfs_v1_self(const char *text, size_t len, const char *controller,
                         char path[SHX_CGROUP_PATH_MAX], const char **reason)
{
    if (len > SHX_CGROUPFS_MAX_TEXT) {
        *reason = "/proc/self/cgroup is too long";
        return -1;
    }
    static const char deleted[] = " (deleted)";
    size_t pos = 0;
    line l;
    while (next_line(text, len, &pos, &l)) {
        size_t n = 0;
        const char *p = line_path(&l, controller, &n);
        if (!p)
            continue;
        if (n >= sizeof deleted - 1 && memcmp(p + n - (sizeof deleted - 1), deleted, sizeof deleted - 1) == 0) {
            *reason = "the host's cgroup has been removed";
            return -1;
        }
        if (n == 0 || p[0] != '/' || memchr(p, '\0', n)) {
            *reason = "a malformed cgroup v2 line in /proc/self/cgroup";
            return -1;
        }
        if (n >= SHX_CGROUP_PATH_MAX) {
            *reason = "the host's cgroup path is too long";
            return -1;
        }
        memcpy(path, p, n);
        path[n] = '\0';
        return 0;
    }
    *reason = controller ? "the controller has no cgroup v1 hierarchy in /proc/self/cgroup"
                         : "the host is in no cgroup v2 (no 0:: line in /proc/self/cgroup)";
    return -1;
}

/* 1 when path has a ".." component. */
static int has_dotdot(const char *path)
{
    for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2)
        if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
            return 1;
    return 0;
}

int shx_cgroupfs_join(const char *mount, const char *root, const char *self,
                      char dir[SHX_CGROUP_PATH_MAX], const char **reason)
{
    if (has_dotdot(self) || !path_under(root, self)) {
        *reason = "the host's cgroup is outside the visible cgroup2 mount";
        return -1;
    }
    size_t rn = strlen(root);
    while (rn > 0 && root[rn - 1] == '/')
        rn--;
    const char *below = self + rn; /* "" or "/..." */
    size_t bn = strlen(below);
    while (bn > 0 && below[bn - 1] == '/')
        bn--;
    size_t mn = strlen(mount);
    while (mn > 1 && mount[mn - 1] == '/')
        mn--;
    if (mn == 1 && bn > 0)
        mn = 0; /* the mount is "/": below brings the slash */
    if (mn + bn >= SHX_CGROUP_PATH_MAX) {
        *reason = "the host's cgroup directory path is too long";
        return -1;
    }
    memcpy(dir, mount, mn);
    memcpy(dir + mn, below, bn);
    dir[mn + bn] = '\0';
    return 0;
}

/* An unsigned decimal of f to *value; 0, or -1 (none, trailing junk, overflow). */
static int parse_u64(const line *f, unsigned long long *value)
{
    if (f->n == 0 || f->n > 20)
        return -1;
    unsigned long long v = 0;
    for (size_t i = 0; i < f->n; i++) {
        unsigned d = (unsigned)(unsigned char)f->s[i] - '0';
        if (d > 9 || v > (~0ull - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *value = v;
    return 0;
}

int shx_cgroupfs_key(const char *text, size_t len, const char *key, unsigned long long *value)
{
    if (len > SHX_CGROUPFS_MAX_TEXT)
        return -1;
    size_t pos = 0;
    line l;
    while (next_line(text, len, &pos, &l)) {
        line name, v;
        size_t fp = 0;
        if (!next_field(&l, &fp, &name) || !is(&name, key))
            continue;
        size_t vp = fp;
        line extra;
        if (!next_field(&l, &vp, &v) || parse_u64(&v, value) != 0 || next_field(&l, &vp, &extra))
            return -1;
        return 1;
    }
    return 0;
}

int shx_cgroupfs_number(const char *text, size_t len, unsigned long long *value)
{
    if (len > SHX_CGROUPFS_MAX_TEXT)
        return -1;
    size_t pos = 0, fp = 0;
    line l, f, extra;
    if (!next_line(text, len, &pos, &l) || !next_field(&l, &fp, &f) || parse_u64(&f, value) != 0 ||
        next_field(&l, &fp, &extra))
        return -1;
    return 0;
}

unsigned shx_cgroupfs_controllers(const char *text, size_t len)
{
    if (len > SHX_CGROUPFS_MAX_TEXT)
        return 0;
    unsigned bits = 0;
    size_t pos = 0;
    line l, f;
    while (next_line(text, len, &pos, &l))
        for (size_t fp = 0; next_field(&l, &fp, &f);)
            bits |= is(&f, "cpu") ? SHX_CGROUP_CPU
                  : is(&f, "memory") ? SHX_CGROUP_MEMORY
                  : is(&f, "pids") ? SHX_CGROUP_PIDS
                                   : 0u;
    return bits;
}

long shx_cgroupfs_pids(const char *text, size_t len, pid_t *out, size_t cap)
{
    if (len > SHX_CGROUPFS_MAX_TEXT) {
        errno = E2BIG;
        return -1;
    }
    size_t n = 0, pos = 0;
    line l;
    while (next_line(text, len, &pos, &l)) {
        unsigned long long v;
        if (parse_u64(&l, &v) != 0 || v == 0 || v > 0x3fffffff) {
            errno = EINVAL;
            return -1;
        }
        if (n == cap) {
            errno = ENOBUFS;
            return -1;
        }
        out[n++] = (pid_t)v;
    }
    return (long)n;
}
