/*
 * test_output.c - output for models through real commands: the spill file
 * holds a big mixed-width stream byte for byte while the capture holds what
 * its notice says; the notice's counts and place; the spill's caps, its
 * disk budget (oldest first), a full disk, and its files' end with the
 * session; secrets hidden whole, across writes, across the pipe's read
 * boundary, on stderr, in a terminal with escape codes around them, from
 * the environment, key shapes as commands print them (indented, in JSON,
 * in grep's colours), in the callback, the capture, the spill file and a
 * background task; the setters' errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shexec.h"
#include "testhook.h"
#include "testutil.h"

static shexec_session *new_session(void)
{
    shexec_session *s;
    assert_int_equal(shexec_session_new(&s), SHEXEC_OK);
    return s;
}

static shexec_run *exec_cmd(shexec_session *s, const char *cmd)
{
    shexec_run *r;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    return r;
}

/* The whole of a file, malloc'd; *len its size. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int files_in(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    int n = -1;
    assert_int_equal(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

/* Characters in a byte string by the library's rule, for the expected counts. */
static uint64_t count_chars(const unsigned char *p, size_t n)
{
    uint64_t chars = 0;
    for (size_t i = 0; i < n; chars++) {
        unsigned char c = p[i];
        size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        i += len <= n - i ? len : n - i;
    }
    return chars;
}

/* 10 MB of well-formed 1-, 2-, 3- and 4-byte characters and newlines. */
static size_t write_mixed(const char *path, size_t want)
{
    static const char *const pieces[] = {"a", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                         "\n", "xyz", "\xD0\x96"};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    size_t len = 0;
    unsigned x = 12345;
    while (len < want) {
        x = x * 1103515245u + 12345u;
        const char *piece = pieces[(x >> 16) % 7];
        fputs(piece, f);
        len += strlen(piece);
    }
    fclose(f);
    return len;
}

static void test_spill_holds_everything_and_the_notice_counts(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    const char *dir = tu_mkdtemp();
    char *spilldir = strdup(dir);
    char src[512];
    snprintf(src, sizeof src, "%s/src.txt", dir);
    char sub[512];
    snprintf(sub, sizeof sub, "%s/spill", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    size_t total = write_mixed(src, 10 * 1000 * 1000);
    size_t srclen;
    char *want = slurp(src, &srclen);
    assert_int_equal(srclen, total);
    uint64_t chars = count_chars((const unsigned char *)want, total);
    uint64_t lines = 0; /* newlines, and the last line when it has none */
    for (size_t i = 0; i < total; i++)
        lines += want[i] == '\n';
    lines += want[total - 1] != '\n';

    shexec_session *s = new_session();
    assert_int_equal(shexec_session_set_spill_dir(s, sub, 0, 0, 0), SHEXEC_OK);
    assert_string_equal(shexec_session_spill_dir(s), sub);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "cat '%s'", src);
    shexec_run *r = exec_cmd(s, cmd);
    assert_int_equal(shexec_run_exit_code(r), 0);
    const char *path;
    uint64_t bytes;
    int err;
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, &bytes, &err), SHEXEC_SPILL_WHOLE);
    assert_int_equal(bytes, total);
    assert_int_equal(err, 0);
    assert_non_null(strstr(path, sub));
    assert_non_null(strstr(path, "-stdout.txt"));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    size_t got_len;
    char *got = slurp(path, &got_len);
    assert_int_equal(got_len, total);
    assert_memory_equal(got, want, total);
    free(got);
    /* stderr stayed empty: no file for it */
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDERR, &path, NULL, NULL), SHEXEC_SPILL_NONE);
    assert_null(path);

    /* the capture: the first 30000 characters, and a notice with exact counts */
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    size_t head_bytes = 0;
    for (uint64_t c = 0; c < 30000; c++) {
        unsigned char b = (unsigned char)want[head_bytes];
        head_bytes += b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
    }
    assert_memory_equal(out, want, head_bytes);
    uint64_t kept_chars, kept_bytes, all_chars, all_bytes;
    assert_int_equal(shexec_run_output_counts(r, SHEXEC_STDOUT, &kept_chars, &kept_bytes,
                                              &all_chars, &all_bytes), SHEXEC_OK);
    assert_int_equal(kept_chars, 30000);
    assert_int_equal(kept_bytes, head_bytes);
    assert_int_equal(all_chars, chars);
    assert_int_equal(all_bytes, total);
    assert_int_equal(shexec_run_output_counts(r, 7, &kept_chars, NULL, NULL, NULL), SHEXEC_EINVAL);
    assert_int_equal(kept_chars, 0);
    assert_int_equal(shexec_run_output_counts(NULL, SHEXEC_STDOUT, NULL, NULL, NULL, NULL),
                     SHEXEC_EINVAL);
    assert_int_equal(shexec_run_output_lines(r, SHEXEC_STDOUT), lines);
    assert_int_equal(shexec_run_output_lines(r, SHEXEC_STDERR), 0);
    assert_int_equal(shexec_run_output_lines(r, 7), 0);
    assert_int_equal(shexec_run_output_lines(NULL, SHEXEC_STDOUT), 0);
    char notice[1024];
    shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, NULL);
    snprintf(notice, sizeof notice,
             "\n[output truncated: kept the first 30000 characters (%zu bytes) of %llu (%zu bytes, "
             "%llu lines); %llu characters (%zu bytes) omitted; full output (%zu bytes) in %s]\n",
             head_bytes, (unsigned long long)chars, total, (unsigned long long)lines,
             (unsigned long long)(chars - 30000), total - head_bytes, total, path);
    assert_int_equal(n, head_bytes + strlen(notice));
    assert_string_equal(out + head_bytes, notice);
    shexec_run_free(r);

    /* head and tail: the marker between them, the notice first */
    assert_int_equal(shexec_session_set_output_limit(s, 30000, SHEXEC_UNIT_CHARS,
                                                     SHEXEC_KEEP_HEAD_TAIL), SHEXEC_OK);
    assert_int_equal(shexec_session_set_notice_position(s, SHEXEC_NOTICE_FIRST), SHEXEC_OK);
    assert_int_equal(shexec_session_notice_position(s), SHEXEC_NOTICE_FIRST);
    r = exec_cmd(s, cmd);
    out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_true(strncmp(out, "[output truncated: kept the first 15000 and the last 15000 "
                             "characters (", 70) == 0);
    const char *eol = strchr(out, '\n');
    assert_non_null(eol);
    assert_non_null(strstr(out, "omitted in the middle; full output (10000"));
    char marker[128];
    snprintf(marker, sizeof marker, "\n[... %llu characters (", (unsigned long long)(chars - 30000));
    const char *mid = strstr(out, marker);
    assert_non_null(mid);
    /* the head before the marker is the stream's start; the tail after it its end */
    size_t head_len = (size_t)(mid - (eol + 1));
    assert_memory_equal(eol + 1, want, head_len);
    const char *tail = strstr(mid + 1, "]\n") + 2;
    size_t tail_len = n - (size_t)(tail - out);
    assert_memory_equal(tail, want + total - tail_len, tail_len);
    shexec_run_free(r);

    shexec_session_free(s);
    /* the session's end removed the files */
    assert_int_equal(files_in(sub), 0);
    free(want);
    tu_rmtree(spilldir);
    free(spilldir);
    tu_leak_end();
}

static void test_spill_only_when_truncated_and_kept_on_request(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    char *dir = strdup(tu_mkdtemp());
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_set_output_limit(s, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    assert_int_equal(shexec_session_set_spill_dir(s, dir, 0, 0, SHEXEC_SPILL_KEEP_FILES),
                     SHEXEC_OK);
    /* 100 two-byte characters: more bytes than the limit, within it in characters */
    shexec_run *r = exec_cmd(s, "i=0; while [ $i -lt 100 ]; do printf '\\303\\251'; i=$((i+1)); done");
    assert_false(shexec_run_truncated(r, SHEXEC_STDOUT));
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_NONE);
    shexec_run_free(r);
    assert_int_equal(files_in(dir), 0);
    r = exec_cmd(s, "seq 1 1000; seq 1 500 >&2");
    const char *path;
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, NULL), SHEXEC_SPILL_WHOLE);
    char *kept = strdup(path);
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDERR, &path, NULL, NULL), SHEXEC_SPILL_WHOLE);
    assert_non_null(strstr(path, "-stderr.txt"));
    shexec_run_free(r);
    shexec_session_free(s);
    assert_true(file_exists(kept)); /* SHEXEC_SPILL_KEEP_FILES */
    assert_int_equal(files_in(dir), 2);
    free(kept);
    tu_rmtree(dir);
    free(dir);
    tu_leak_end();
}

/* A name already taken (a kept file of an earlier setting of the same
 * directory, whose runs count from 1 again) gets "-1" before ".txt", and
 * the run and its notice name the file made. */
static void test_spill_name_taken_gets_a_suffix(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    char *dir = strdup(tu_mkdtemp());
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_set_output_limit(s, 100, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    char first[600], second[600];
    snprintf(first, sizeof first, "%s/shexec-%ld-1-stdout.txt", dir, (long)getpid());
    snprintf(second, sizeof second, "%s/shexec-%ld-1-stdout-1.txt", dir, (long)getpid());
    for (int round = 0; round < 2; round++) {
        assert_int_equal(shexec_session_set_spill_dir(s, dir, 0, 0, SHEXEC_SPILL_KEEP_FILES),
                         SHEXEC_OK);
        shexec_run *r = exec_cmd(s, "seq 1 1000");
        const char *path;
        assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, NULL),
                         SHEXEC_SPILL_WHOLE);
        assert_string_equal(path, round ? second : first);
        assert_non_null(strstr(shexec_run_output(r, SHEXEC_STDOUT, NULL), path));
        shexec_run_free(r);
    }
    shexec_session_free(s);
    assert_true(file_exists(first));
    assert_true(file_exists(second));
    tu_rmtree(dir);
    free(dir);
}

static void test_spill_caps_and_budget(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    char *dir = strdup(tu_mkdtemp());
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_set_output_limit(s, 10, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    /* a file takes 5000 bytes at most, all of them 12000 */
    assert_int_equal(shexec_session_set_spill_dir(s, dir, 5000, 12000, 0), SHEXEC_OK);
    shexec_run *r = exec_cmd(s, "head -c 8000 /dev/zero | tr '\\0' a");
    const char *path;
    uint64_t bytes;
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, &bytes, NULL),
                     SHEXEC_SPILL_CAPPED);
    assert_int_equal(bytes, 5000);
    size_t len;
    char *got = slurp(path, &len);
    assert_true(len > 5000);
    assert_non_null(strstr(got + 5000, "3000 more bytes were not written"));
    free(got);
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_non_null(strstr(out, "; the first 5000 bytes in "));
    assert_non_null(strstr(out, "(3000 more bytes not saved: spill cap)]"));
    char *first = strdup(path);

    /* two more: the budget removes the oldest file first */
    shexec_run *r2 = exec_cmd(s, "head -c 4000 /dev/zero | tr '\\0' b");
    assert_int_equal(shexec_run_spill(r2, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_WHOLE);
    assert_true(file_exists(first));
    shexec_run *r3 = exec_cmd(s, "head -c 4000 /dev/zero | tr '\\0' c");
    assert_int_equal(shexec_run_spill(r3, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_WHOLE);
    assert_false(file_exists(first));
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, NULL), SHEXEC_SPILL_REMOVED);
    assert_string_equal(path, first);
    assert_int_equal(files_in(dir), 2);
    shexec_run_free(r);
    shexec_run_free(r2);
    shexec_run_free(r3);
    /* turning the spill off removes the files too */
    assert_int_equal(shexec_session_set_spill_dir(s, NULL, 0, 0, 0), SHEXEC_OK);
    assert_null(shexec_session_spill_dir(s));
    assert_int_equal(files_in(dir), 0);
    shexec_session_free(s);
    free(first);
    tu_rmtree(dir);
    free(dir);
    tu_leak_end();
}

/* Pump the session until r has finished. */
static void finish_run(shexec_session *s, shexec_run *r)
{
    int64_t t0 = tu_now_ms();
    while (shexec_run_state(r) <= SHEXEC_STATE_RUNNING) {
        assert_true(tu_now_ms() - t0 < 30000);
        assert_true(shexec_session_wait(s, 1000) >= 0);
    }
}

typedef struct spill_move {
    shexec_session *s;
    const char *to;
    int moved;
} spill_move;

/* An output callback that moves the session's spill to another directory
 * on the command's first output. */
static void move_spill(void *user, int stream, const char *data, size_t len)
{
    spill_move *m = user;
    (void)stream, (void)data, (void)len;
    if (!m->moved++)
        assert_int_equal(shexec_session_set_spill_dir(m->s, m->to, 0, 0, 0), SHEXEC_OK);
}

/* A command that has not outgrown its limit yet when the session's spill
 * is turned off (between its start and its overflow), or moved to another
 * directory (from its own callback): the directory it started with is let
 * go of with its files, so it makes none there (nor in the new one), and
 * its result is whole. A command started after the move spills into the
 * new directory. */
static void test_spill_dir_changed_while_running(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    char *dir = strdup(tu_mkdtemp());
    char *dir2 = strdup(tu_mkdtemp());
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_set_output_limit(s, 100, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    assert_int_equal(shexec_session_set_spill_dir(s, dir, 0, 0, 0), SHEXEC_OK);
    static const char cmd[] = "echo first; sleep 0.2; head -c 100000 /dev/zero | tr '\\0' a";
    shexec_run *r;
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    assert_int_equal(shexec_session_set_spill_dir(s, NULL, 0, 0, 0), SHEXEC_OK);
    finish_run(s, r);
    assert_int_equal(shexec_run_exit_code(r), 0);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 100006);
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_NONE);
    assert_null(strstr(shexec_run_output(r, SHEXEC_STDOUT, NULL), "full output"));
    assert_int_equal(files_in(dir), 0);
    shexec_run_free(r);

    assert_int_equal(shexec_session_set_spill_dir(s, dir, 0, 0, 0), SHEXEC_OK);
    spill_move m = {s, dir2, 0};
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, move_spill, &m), SHEXEC_OK);
    assert_int_equal(shexec_run_start(r), SHEXEC_OK);
    finish_run(s, r);
    assert_true(m.moved > 0);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 100006);
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_NONE);
    assert_int_equal(files_in(dir), 0);
    assert_int_equal(files_in(dir2), 0);
    shexec_run_free(r);

    r = exec_cmd(s, "head -c 1000 /dev/zero | tr '\\0' b");
    const char *path;
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, NULL), SHEXEC_SPILL_WHOLE);
    assert_ptr_equal(strstr(path, dir2), path);
    assert_int_equal(files_in(dir2), 1);
    shexec_run_free(r);
    shexec_session_free(s);
    assert_int_equal(files_in(dir2), 0);
    tu_rmtree(dir);
    tu_rmtree(dir2);
    free(dir);
    free(dir2);
    tu_leak_end();
}

/* A spill into a full file system: the command's result is what it would
 * have been, and the notice says the spill failed. */
static void test_spill_into_a_full_disk(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    char *dir = strdup(tu_mkdtemp());
    if (mount("tmpfs", dir, "tmpfs", 0, "size=1m") != 0) {
        print_message("cannot mount a tmpfs here (%s): skipped\n", strerror(errno));
        tu_rmtree(dir);
        free(dir);
        skip();
    }
    tu_leak_begin();
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_set_spill_dir(s, dir, 0, 0, 0), SHEXEC_OK);
    shexec_run *r = exec_cmd(s, "head -c 3000000 /dev/zero | tr '\\0' x; echo done >&2; exit 7");
    assert_int_equal(shexec_run_state(r), SHEXEC_STATE_EXITED);
    assert_int_equal(shexec_run_exit_code(r), 7);
    assert_int_equal(shexec_run_output_total(r, SHEXEC_STDOUT), 3000000);
    const char *path;
    int err;
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, &err), SHEXEC_SPILL_FAILED);
    assert_null(path);
    assert_int_equal(err, ENOSPC);
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_non_null(strstr(out, "; full output not saved: the spill failed (no space left on "
                                "device)]\n"));
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "done\n");
    assert_int_equal(files_in(dir), 0); /* the partial file is gone: its space is back */
    shexec_run_free(r);
    /* the next one fits */
    r = exec_cmd(s, "head -c 100000 /dev/zero | tr '\\0' y");
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_WHOLE);
    shexec_run_free(r);
    shexec_session_free(s);
    tu_leak_end();
    assert_int_equal(umount(dir), 0);
    tu_rmtree(dir);
    free(dir);
}

static void test_spill_dir_errors(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    shexec_session *s = new_session();
    /* each refusal says why */
    static const struct {
        const char *dir;
        uint64_t file_max, total_max;
        unsigned flags;
        const char *why;
    } bad[] = {
        {"relative/dir", 0, 0, 0, "must be an absolute path"},
        {"spill", 0, 0, 0, "must be an absolute path"},
        {"", 0, 0, 0, "must be an absolute path"},
        {"/nonexistent/spill", 0, 0, 0, "is not a directory"},
        {"/etc/passwd", 0, 0, 0, "is not a directory"},
        {"/tmp", 0, 0, 0x10, "unknown spill flags"},
        {"/tmp", 100, 10, 0, "above the total"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(shexec_session_set_spill_dir(s, bad[i].dir, bad[i].file_max,
                                                      bad[i].total_max, bad[i].flags),
                         SHEXEC_EINVAL);
        if (!strstr(shexec_session_errmsg(s), bad[i].why))
            fail_msg("\"%s\": the message is \"%s\"", bad[i].dir, shexec_session_errmsg(s));
    }
    assert_null(shexec_session_spill_dir(s)); /* nothing changed */
    assert_int_equal(shexec_session_set_spill_dir(NULL, "/tmp", 0, 0, 0), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_notice_position(s, 7), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_spill(NULL, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_NONE);
    shexec_session_free(s);
}

/* ---- redaction ---- */

typedef struct seen {
    char buf[1 << 20];
    size_t len;
} seen;

static void on_output(void *user, int stream, const char *data, size_t len)
{
    seen *sn = user;
    (void)stream;
    if (sn->len + len < sizeof sn->buf) {
        memcpy(sn->buf + sn->len, data, len);
        sn->len += len;
    }
}

#define SECRET "s3cr3t-Value-0123456789"

static void test_redact_everywhere(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    char *dir = strdup(tu_mkdtemp());
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_redact_value(s, "DB_PASSWORD", SECRET, strlen(SECRET)),
                     SHEXEC_OK);
    assert_int_equal(shexec_session_set_output_limit(s, 1000, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    assert_int_equal(shexec_session_set_spill_dir(s, dir, 0, 0, 0), SHEXEC_OK);
    static seen sn;
    sn.len = 0;
    shexec_run *r;
    /* whole; split across two writes 1 ms apart; on stderr; then past the limit */
    assert_int_equal(shexec_run_new(&r, s,
                                    "echo a " SECRET " b; printf 's3cr3t-Val'; sleep 0.001; "
                                    "printf 'ue-0123456789\\n'; echo e " SECRET " >&2; "
                                    "i=0; while [ $i -lt 100 ]; do echo " SECRET "; i=$((i+1)); done"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_fn(r, on_output, &sn), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_true(strncmp(out, "a [REDACTED:DB_PASSWORD] b\n[REDACTED:DB_PASSWORD]\n", 50) == 0);
    assert_null(strstr(out, "s3cr3t"));
    assert_string_equal(shexec_run_output(r, SHEXEC_STDERR, NULL), "e [REDACTED:DB_PASSWORD]\n");
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 102);
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDERR), 1);
    sn.buf[sn.len] = '\0';
    assert_null(strstr(sn.buf, "s3cr3t"));
    assert_non_null(strstr(sn.buf, "[REDACTED:DB_PASSWORD]"));
    const char *path;
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, &path, NULL, NULL), SHEXEC_SPILL_WHOLE);
    size_t len;
    char *file = slurp(path, &len);
    assert_null(strstr(file, "s3cr3t"));
    assert_non_null(strstr(file, "[REDACTED:DB_PASSWORD]\n[REDACTED:DB_PASSWORD]\n"));
    free(file);
    shexec_run_free(r);
    shexec_session_free(s);
    tu_rmtree(dir);
    free(dir);
    tu_leak_end();
}

/* A secret across the 64 KiB read boundary, wherever it falls in it. */
static void test_redact_across_the_read_boundary(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_redact_value(s, "K", SECRET, strlen(SECRET)), SHEXEC_OK);
    assert_int_equal(shexec_session_set_output_limit(s, 1 << 20, SHEXEC_UNIT_BYTES,
                                                     SHEXEC_KEEP_HEAD), SHEXEC_OK);
    for (int back = 1; back < (int)strlen(SECRET); back += 5) {
        char cmd[256];
        /* one write: the pad ends `back` bytes before the first read's end */
        snprintf(cmd, sizeof cmd,
                 "{ head -c %d /dev/zero | tr '\\0' x; printf '" SECRET "\\n'; } | cat",
                 65536 - back);
        shexec_run *r = exec_cmd(s, cmd);
        size_t n;
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
        assert_int_equal(n, (size_t)(65536 - back) + strlen("[REDACTED:K]\n"));
        assert_string_equal(out + 65536 - back, "[REDACTED:K]\n");
        shexec_run_free(r);
    }
    shexec_session_free(s);
}

static void test_redact_in_a_terminal(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_redact_value(s, "K", SECRET, strlen(SECRET)), SHEXEC_OK);
    for (int strip = 0; strip <= 1; strip++) {
        shexec_run *r;
        assert_int_equal(shexec_run_new(&r, s,
                                        "printf '\\033[1;31m" SECRET "\\033[0m and \\033[32ms3cr3t-"
                                        "\\033[0mValue-0123456789\\n'"),
                         SHEXEC_OK);
        assert_int_equal(shexec_run_set_pty(r, SHEXEC_PTY_ON), SHEXEC_OK);
        if (strip)
            assert_int_equal(shexec_run_set_ansi(r, SHEXEC_ANSI_STRIP), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
        assert_null(strstr(out, SECRET));
        if (strip) /* the codes gone, the secret split by them is whole again: hidden */
            assert_string_equal(out, "[REDACTED:K] and [REDACTED:K]\n");
        else /* the codes stay; the whole one is hidden between them */
            assert_non_null(strstr(out, "\033[1;31m[REDACTED:K]\033[0m"));
        shexec_run_free(r);
    }
    shexec_session_free(s);
}

static void test_redact_env_and_shapes(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_setenv(s, "MY_SERVICE_TOKEN", "tok-abcdefgh-12345"), SHEXEC_OK);
    assert_int_equal(shexec_session_setenv(s, "HARMLESS", "tok-zzzzzzzz-12345"), SHEXEC_OK);
    assert_int_equal(shexec_session_redact_env(s, NULL, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_redact_shapes(s, SHEXEC_REDACT_KEY_SHAPES |
                                                         SHEXEC_REDACT_PRIVATE_KEYS), SHEXEC_OK);
    shexec_run *r = exec_cmd(s, "echo $MY_SERVICE_TOKEN $HARMLESS; "
                                "echo ghp_0123456789abcdefghijklmnopqrstuvwxyz; "
                                "printf -- '-----BEGIN EC PRIVATE KEY-----\\nMHcCAQEE\\n"
                                "-----END EC PRIVATE KEY-----\\n'");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL),
                        "[REDACTED:MY_SERVICE_TOKEN] tok-zzzzzzzz-12345\n"
                        "[REDACTED:GITHUB_TOKEN]\n[REDACTED:PRIVATE_KEY]\n");
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 3);
    shexec_run_free(r);
    /* a run's own variable: hidden only when the run asks */
    for (int own = 0; own <= 1; own++) {
        assert_int_equal(shexec_run_new(&r, s, "echo $RUN_SECRET"), SHEXEC_OK);
        assert_int_equal(shexec_run_setenv(r, "RUN_SECRET", "only-this-run-1"), SHEXEC_OK);
        assert_int_equal(shexec_run_redact_own_env(r, own), SHEXEC_OK);
        assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL),
                            own ? "[REDACTED:RUN_SECRET]\n" : "only-this-run-1\n");
        shexec_run_free(r);
    }
    /* a run's own value */
    assert_int_equal(shexec_run_new(&r, s, "echo one-off-value-9 one-off-value-9x"), SHEXEC_OK);
    assert_int_equal(shexec_run_redact_value(r, "ONE_OFF", "one-off-value-9", 15), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL),
                        "[REDACTED:ONE_OFF] [REDACTED:ONE_OFF]x\n");
    assert_int_equal(shexec_run_redact_value(r, "LATE", "too-late-value", 14), SHEXEC_ESTATE);
    shexec_run_free(r);
    /* cleared: nothing hidden any more */
    assert_int_equal(shexec_session_redact_clear(s), SHEXEC_OK);
    r = exec_cmd(s, "echo $MY_SERVICE_TOKEN");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "tok-abcdefgh-12345\n");
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 0);
    shexec_run_free(r);
    shexec_session_free(s);
}

/* Keys as commands print them: a block indented in YAML, a key file's JSON
 * string with its breaks written out, a token grep prints in colour. */
static void test_redact_keys_where_commands_print_them(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_redact_shapes(s, SHEXEC_REDACT_KEY_SHAPES |
                                                         SHEXEC_REDACT_PRIVATE_KEYS), SHEXEC_OK);
    shexec_run *r = exec_cmd(
        s, "printf '  tls.key: |\\n    -----BEGIN RSA PRIVATE KEY-----\\n"
           "    MIIEpAIBAAKCAQEAyamlBody\\n    -----END RSA PRIVATE KEY-----\\n  tls.crt: x\\n'; "
           "printf '%s\\n' '{\"private_key\": \"-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANjsonBody"
           "\\n-----END PRIVATE KEY-----\\n\", \"client_id\": \"1\"}'; "
           "echo 'TOKEN=ghp_0123456789abcdefghijklmnopqrstuvwxyz' | "
           "GREP_COLORS='mt=01;31' grep --color=always -E 'ghp_[A-Za-z0-9]+'");
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, NULL);
    const char *text = "  tls.key: |\n    [REDACTED:PRIVATE_KEY]\n  tls.crt: x\n"
                       "{\"private_key\": \"[REDACTED:PRIVATE_KEY]\\n\", \"client_id\": \"1\"}\n"
                       "TOKEN=\033[";
    if (strncmp(out, text, strlen(text)) != 0)
        fail_msg("got \"%s\"", out);
    assert_non_null(strstr(out, "\033[K[REDACTED:GITHUB_TOKEN]\033[m")); /* its codes kept */
    assert_null(strstr(out, "Body"));
    assert_null(strstr(out, "0123456789abcdef"));
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 3);
    shexec_run_free(r);
    shexec_session_free(s);
}

static void test_redact_in_a_task(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_redact_value(s, "K", SECRET, strlen(SECRET)), SHEXEC_OK);
    shexec_run *r;
    assert_int_equal(shexec_run_new(&r, s, "echo " SECRET "; sleep 0.2; echo x" SECRET "x"),
                     SHEXEC_OK);
    shexec_task *t;
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    int64_t until = tu_now_ms() + 20000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING && tu_now_ms() < until)
        assert_true(shexec_session_wait(s, 100) >= 0);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, NULL),
                        "[REDACTED:K]\nx[REDACTED:K]x\n");
    shexec_task_free(t);
    shexec_session_free(s);
    tu_leak_end();
}

/* A secret the command's last bytes begin and its leftovers' first bytes
 * end is hidden, in the task that reads on: the run's output keeps no piece
 * of it, and each counts its own occurrences. */
static void test_redact_across_leftover_adoption(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_redact_value(s, "K", SECRET, strlen(SECRET)), SHEXEC_OK);
    shexec_run *r = exec_cmd(s, "echo " SECRET "; printf 'a s3cr3t-Val'; "
                                "(sleep 0.3; printf 'ue-0123456789 b\\n') &");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "[REDACTED:K]\na ");
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 1);
    shexec_task *t = NULL;
    assert_int_equal(shexec_session_take_task(&t, s, tu_leftover_id(r)), SHEXEC_OK);
    int64_t until = tu_now_ms() + 20000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING && tu_now_ms() < until)
        assert_true(shexec_session_wait(s, 100) >= 0);
    assert_string_equal(shexec_task_read(t, SHEXEC_STDOUT, NULL), "[REDACTED:K] b\n");
    assert_int_equal(shexec_run_redactions(shexec_task_run(t), SHEXEC_STDOUT), 1);
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 1);
    shexec_run_free(r);
    shexec_task_free(t);
    shexec_session_free(s);
    tu_leak_end();
}

static void test_redact_errors(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (redaction, spill)"))
        skip();
    (void)state;
    shexec_session *s = new_session();
    assert_int_equal(shexec_session_redact_value(s, "OK", "abc", 3), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_redact_value(s, "bad name", "abcdefgh", 8), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_redact_value(s, "", "abcdefgh", 8), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_redact_value(s, "OK", NULL, 8), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_redact_value(NULL, "OK", "abcdefgh", 8), SHEXEC_EINVAL);
    const char *globs[] = {"*KEY*", ""};
    assert_int_equal(shexec_session_redact_env(s, globs, 2), SHEXEC_EINVAL);
    assert_int_equal(shexec_session_redact_shapes(s, 0x80), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_redact_value(NULL, "OK", "abcdefgh", 8), SHEXEC_EINVAL);
    assert_int_equal(shexec_run_redactions(NULL, SHEXEC_STDOUT), 0);
    /* none of that hid anything */
    shexec_run *r = exec_cmd(s, "echo abcdefgh");
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "abcdefgh\n");
    shexec_run_free(r);
    shexec_session_free(s);
}

/* Well-formed UTF-8 (no overlongs, surrogates, or cut sequences). */
static int utf8_valid(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        size_t len = c < 0x80 ? 1 : c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3
                                  : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!len || len > n - i)
            return 0;
        for (size_t k = 1; k < len; k++)
            if ((p[i + k] & 0xC0) != 0x80)
                return 0;
        if ((c == 0xE0 && p[i + 1] < 0xA0) || (c == 0xED && p[i + 1] > 0x9F) ||
            (c == 0xF0 && p[i + 1] < 0x90) || (c == 0xF4 && p[i + 1] > 0x8F))
            return 0;
        i += len;
    }
    return 1;
}

/*
 * One stream's text under a 600-unit limit that holds the notice: at most
 * 600 units in all (and not far below: the room is used), valid UTF-8, the
 * kept text the stream's start (head) or end (tail), the counts
 * shexec_run_output_counts() gives those of the text shown.
 */
static void check_within_600(shexec_run *r, int stream, const char *want, size_t total,
                             int unit, int keep, int first, const char *path)
{
    size_t n;
    const char *out = shexec_run_output(r, stream, &n);
    uint64_t units = unit == SHEXEC_UNIT_BYTES ? n : count_chars((const unsigned char *)out, n);
    if (units > 600 || units < 590)
        fail_msg("unit %d, keep %d, first %d: %llu units: %s", unit, keep, first,
                 (unsigned long long)units, out);
    assert_true(utf8_valid((const unsigned char *)out, n));
    assert_true(shexec_run_truncated(r, stream));
    uint64_t kept_chars, kept_bytes, chars, bytes;
    assert_int_equal(shexec_run_output_counts(r, stream, &kept_chars, &kept_bytes, &chars, &bytes),
                     SHEXEC_OK);
    assert_int_equal(bytes, total);
    uint64_t kept_units = unit == SHEXEC_UNIT_BYTES ? kept_bytes : kept_chars;
    assert_true(kept_units > 200 && kept_units < 600 && kept_bytes >= kept_chars);
    const char *notice = strstr(out, "[output truncated: kept the first ");
    assert_non_null(notice);
    const char *text = first ? strchr(out, '\n') + 1 : out;
    assert_true(first ? notice == out : notice[-1] == '\n');
    char counts[160];
    if (keep == SHEXEC_KEEP_HEAD) {
        snprintf(counts, sizeof counts, "kept the first %llu characters (%llu bytes) of %llu",
                 (unsigned long long)kept_chars, (unsigned long long)kept_bytes,
                 (unsigned long long)chars);
        assert_memory_equal(text, want, (size_t)kept_bytes);
        assert_int_equal(count_chars((const unsigned char *)text, (size_t)kept_bytes), kept_chars);
    } else {
        const char *marker = strstr(text, "\n[... ");
        assert_non_null(marker);
        size_t head = (size_t)(marker - text);
        const char *tail = strstr(marker, " omitted ...]\n") + 14;
        size_t tail_len = (size_t)(kept_bytes - head);
        assert_memory_equal(text, want, head);
        assert_memory_equal(tail, want + total - tail_len, tail_len);
        snprintf(counts, sizeof counts, "characters (%zu + %zu bytes) of %llu", head, tail_len,
                 (unsigned long long)chars);
    }
    assert_non_null(strstr(notice, counts));
    assert_non_null(strstr(notice, path));
}

/* SHEXEC_KEEP_WITHIN_LIMIT through real commands: 600 characters (or
 * bytes) in all, notice with its spill path included, for stdout and
 * stderr, the head or both ends, the notice first or last; per run and for
 * a task; and off by default. */
static void test_output_limit_holds_the_notice(void **state)
{
    if (!tu_platform_has(SHX_PLATFORM_OUTPUT, "the output filters (the spill)"))
        skip();
    (void)state;
    tu_leak_begin();
    const char *dir = tu_mkdtemp();
    char *tmp = strdup(dir);
    char src[512];
    snprintf(src, sizeof src, "%s/src.txt", tmp);
    size_t total = write_mixed(src, 200000);
    size_t srclen;
    char *want = slurp(src, &srclen);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "cat '%s'; cat '%s' >&2", src, src);

    shexec_session *s = new_session();
    assert_int_equal(shexec_session_set_spill_dir(s, tmp, 0, 0, 0), SHEXEC_OK);
    /* the default: the notice on top of 600 characters */
    assert_int_equal(shexec_session_set_output_limit(s, 600, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    shexec_run *r = exec_cmd(s, cmd);
    size_t n;
    const char *out = shexec_run_output(r, SHEXEC_STDOUT, &n);
    assert_true(count_chars((const unsigned char *)out, n) > 700);
    shexec_run_free(r);

    for (int unit = SHEXEC_UNIT_CHARS; unit <= SHEXEC_UNIT_BYTES; unit++)
        for (int keep = SHEXEC_KEEP_HEAD; keep <= SHEXEC_KEEP_HEAD_TAIL; keep++)
            for (int first = 0; first <= 1; first++) {
                assert_int_equal(shexec_session_set_output_limit(s, 600, unit,
                                                                 keep | SHEXEC_KEEP_WITHIN_LIMIT),
                                 SHEXEC_OK);
                int got_keep;
                assert_int_equal(shexec_session_output_limit(s, NULL, NULL, &got_keep), SHEXEC_OK);
                assert_int_equal(got_keep, keep | SHEXEC_KEEP_WITHIN_LIMIT);
                assert_int_equal(shexec_session_set_notice_position(s, first), SHEXEC_OK);
                r = exec_cmd(s, cmd);
                check_within_600(r, SHEXEC_STDOUT, want, total, unit, keep, first, tmp);
                check_within_600(r, SHEXEC_STDERR, want, total, unit, keep, first, tmp);
                shexec_run_free(r);
            }

    /* per run, in a session that keeps the notice on top */
    assert_int_equal(shexec_session_set_output_limit(s, 600, SHEXEC_UNIT_CHARS, SHEXEC_KEEP_HEAD),
                     SHEXEC_OK);
    assert_int_equal(shexec_session_set_notice_position(s, SHEXEC_NOTICE_LAST), SHEXEC_OK);
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_limit(r, 600, SHEXEC_UNIT_BYTES,
                                                 SHEXEC_KEEP_HEAD_TAIL | SHEXEC_KEEP_WITHIN_LIMIT),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    check_within_600(r, SHEXEC_STDOUT, want, total, SHEXEC_UNIT_BYTES, SHEXEC_KEEP_HEAD_TAIL, 0,
                     tmp);
    shexec_run_free(r);

    /* a task: its output and what is new since its last read */
    assert_int_equal(shexec_run_new(&r, s, cmd), SHEXEC_OK);
    assert_int_equal(shexec_run_set_output_limit(r, 600, SHEXEC_UNIT_CHARS,
                                                 SHEXEC_KEEP_HEAD | SHEXEC_KEEP_WITHIN_LIMIT),
                     SHEXEC_OK);
    shexec_task *t;
    assert_int_equal(shexec_run_start_task(&t, r), SHEXEC_OK);
    int64_t until = tu_now_ms() + 20000;
    while (shexec_run_state(shexec_task_run(t)) <= SHEXEC_STATE_RUNNING && tu_now_ms() < until)
        assert_true(shexec_session_wait(s, 100) >= 0);
    check_within_600(shexec_task_run(t), SHEXEC_STDOUT, want, total, SHEXEC_UNIT_CHARS,
                     SHEXEC_KEEP_HEAD, 0, tmp);
    out = shexec_task_read(t, SHEXEC_STDERR, &n);
    assert_true(count_chars((const unsigned char *)out, n) <= 600);
    assert_non_null(strstr(out, "[output truncated: kept the first "));
    /* the read's counts are of the text it shows, as its notice's are */
    uint64_t kept_chars, kept_bytes, chars, bytes;
    assert_int_equal(shexec_task_read_counts(t, SHEXEC_STDERR, &kept_chars, &kept_bytes, &chars,
                                             &bytes),
                     SHEXEC_OK);
    const char *cut = strstr(out, "\n[output truncated: kept the first ");
    assert_non_null(cut);
    assert_int_equal(kept_bytes, (uint64_t)(cut - out));
    assert_int_equal(kept_chars, count_chars((const unsigned char *)out, (size_t)(cut - out)));
    assert_int_equal(bytes, total);
    char said[96];
    snprintf(said, sizeof said, "kept the first %llu characters (%llu bytes) of ",
             (unsigned long long)kept_chars, (unsigned long long)kept_bytes);
    assert_non_null(strstr(cut, said));
    shexec_task_free(t);

    /* unknown flags are refused */
    assert_int_equal(shexec_session_set_output_limit(s, 600, SHEXEC_UNIT_CHARS, 0x200),
                     SHEXEC_EINVAL);
    assert_int_equal(shexec_session_set_output_limit(s, 600, SHEXEC_UNIT_CHARS,
                                                     2 | SHEXEC_KEEP_WITHIN_LIMIT),
                     SHEXEC_EINVAL);
    shexec_session_free(s);
    free(want);
    tu_rmtree(tmp);
    free(tmp);
    tu_leak_end();
}

/* What the build says of the filters: with them a registered value is
 * hidden; OUTPUT=0 refuses every request for a filter with SHEXEC_ESYS,
 * saying why, takes every turning off, and passes output as it is. */
static void test_filters_by_build(void **state)
{
    (void)state;
    shexec_session *s = new_session();
    shexec_run *r = NULL;
    if (shx_test_platform() & SHX_PLATFORM_OUTPUT) {
        assert_int_equal(shexec_session_redact_value(s, "TOKEN", "hidden-value", 12), SHEXEC_OK);
        assert_int_equal(shexec_session_set_spill_dir(s, "/tmp", 0, 0, 0), SHEXEC_OK);
        assert_int_equal(shexec_session_set_spill_dir(s, NULL, 0, 0, 0), SHEXEC_OK);
        r = exec_cmd(s, "echo hidden-value");
        assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL), "[REDACTED:TOKEN]\n");
        assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 1);
        shexec_run_free(r);
        shexec_session_free(s);
        return;
    }
    assert_int_equal(shexec_session_redact_value(s, "TOKEN", "hidden-value", 12), SHEXEC_ESYS);
    assert_non_null(strstr(shexec_session_errmsg(s), "OUTPUT=0"));
    const char *glob = "*_TOKEN";
    assert_int_equal(shexec_session_redact_env(s, &glob, 1), SHEXEC_ESYS);
    assert_int_equal(shexec_session_redact_env(s, NULL, 0), SHEXEC_ESYS);
    assert_int_equal(shexec_session_redact_env(s, &glob, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_redact_shapes(s, SHEXEC_REDACT_KEY_SHAPES), SHEXEC_ESYS);
    assert_int_equal(shexec_session_redact_shapes(s, 0), SHEXEC_OK);
    assert_int_equal(shexec_session_redact_clear(s), SHEXEC_OK);
    assert_int_equal(shexec_session_set_spill_dir(s, "/tmp", 0, 0, 0), SHEXEC_ESYS);
    assert_int_equal(shexec_session_set_spill_dir(s, NULL, 0, 0, 0), SHEXEC_OK);
    assert_null(shexec_session_spill_dir(s));
    assert_int_equal(shexec_run_new(&r, s, "echo hidden-value sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123"),
                     SHEXEC_OK);
    assert_int_equal(shexec_run_redact_value(r, "TOKEN", "hidden-value", 12), SHEXEC_ESYS);
    assert_int_equal(shexec_run_redact_own_env(r, 1), SHEXEC_ESYS);
    assert_int_equal(shexec_run_redact_own_env(r, 0), SHEXEC_OK);
    assert_int_equal(shexec_run_exec(r), SHEXEC_OK);
    assert_string_equal(shexec_run_output(r, SHEXEC_STDOUT, NULL),
                        "hidden-value sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123\n");
    assert_int_equal(shexec_run_redactions(r, SHEXEC_STDOUT), 0);
    assert_int_equal(shexec_run_spill(r, SHEXEC_STDOUT, NULL, NULL, NULL), SHEXEC_SPILL_NONE);
    shexec_run_free(r);
    shexec_session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spill_holds_everything_and_the_notice_counts),
        cmocka_unit_test(test_spill_only_when_truncated_and_kept_on_request),
        cmocka_unit_test(test_spill_name_taken_gets_a_suffix),
        cmocka_unit_test(test_spill_caps_and_budget),
        cmocka_unit_test(test_spill_dir_changed_while_running),
        cmocka_unit_test(test_spill_into_a_full_disk),
        cmocka_unit_test(test_spill_dir_errors),
        cmocka_unit_test(test_redact_everywhere),
        cmocka_unit_test(test_redact_across_the_read_boundary),
        cmocka_unit_test(test_redact_in_a_terminal),
        cmocka_unit_test(test_redact_env_and_shapes),
        cmocka_unit_test(test_redact_keys_where_commands_print_them),
        cmocka_unit_test(test_redact_in_a_task),
        cmocka_unit_test(test_redact_across_leftover_adoption),
        cmocka_unit_test(test_redact_errors),
        cmocka_unit_test(test_output_limit_holds_the_notice),
        cmocka_unit_test(test_filters_by_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
