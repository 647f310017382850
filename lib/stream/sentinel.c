/*
 * sentinel.c - the stdout filter for cwd tracking (see sentinel.h).
 */
#include "stream/sentinel.h"

#include <stdio.h>
#include <string.h>

#include "shx/platform.h"

void shx_sentinel_make_tag(char *tag, unsigned long long nonce)
{
    (void)snprintf(tag, 40, "__SHEXEC_CWD_%016llx__", nonce); /* always 31 characters */
}

void shx_sentinel_init(shx_sentinel *f, const char *tag)
{
    memset(f, 0, sizeof *f);
    f->taglen = strlen(tag);
    if (f->taglen >= SHX_SENTINEL_TAG_MAX)
        f->taglen = SHX_SENTINEL_TAG_MAX - 1;
    memcpy(f->tag, tag, f->taglen);
}

static int emit_some(shx_emit_fn emit, void *ctx, const char *p, size_t n)
{
    return n ? emit(ctx, p, n) : 0;
}

/* Length of the longest suffix of p[0..n) that is a proper prefix of the tag. */
static size_t tag_prefix_at_end(const shx_sentinel *f, const char *p, size_t n)
{
    size_t max = f->taglen - 1 < n ? f->taglen - 1 : n;
    for (size_t k = max; k > 0; k--) {
        if (p[n - k] == f->tag[0] && memcmp(p + n - k, f->tag, k) == 0)
            return k;
    }
    return 0;
}

static int scan(shx_sentinel *f, const char *p, size_t n, shx_emit_fn emit, void *ctx);

/* A whole TAG was seen: the bytes up to the next NUL are a directory. */
static void start_record(shx_sentinel *f)
{
    f->in_record = 1;
    shx_buf_clear(&f->record);
}

/* Collect directory bytes until NUL; returns bytes consumed or -1. */
static long collect_record(shx_sentinel *f, const char *p, size_t n, shx_emit_fn emit, void *ctx)
{
    const char *nul = memchr(p, '\0', n);
    size_t take = nul ? (size_t)(nul - p) : n;
    if (f->record.len + take > SHX_SENTINEL_MAX_PATH) {
        /* too long to be a directory: it was output after all. Re-scan what
         * was held, since another TAG may start inside it. */
        shx_buf held = f->record;
        f->record = (shx_buf)SHX_BUF_INIT;
        f->in_record = 0;
        int rc = emit_some(emit, ctx, f->tag, f->taglen);
        if (rc == 0)
            rc = scan(f, held.data ? held.data : "", held.len, emit, ctx);
        shx_buf_free(&held);
        return rc == 0 ? 0 : -1;
    }
    if (shx_buf_append(&f->record, p, take) != 0)
        return -1;
    if (!nul)
        return (long)n;
    shx_buf tmp = f->path;
    f->path = f->record;
    f->record = tmp;
    shx_buf_clear(&f->record);
    f->in_record = 0;
    f->found++;
    return (long)take + 1;
}

static int scan(shx_sentinel *f, const char *p, size_t n, shx_emit_fn emit, void *ctx)
{
    size_t i = 0;
    while (i < n) {
        if (f->in_record) {
            long used = collect_record(f, p + i, n - i, emit, ctx);
            if (used < 0)
                return -1;
            i += (size_t)used;
            continue;
        }
        if (f->heldlen) {
            /* a TAG prefix was held: does the new input complete it? */
            char tmp[2 * SHX_SENTINEL_TAG_MAX];
            size_t more = n - i < f->taglen ? n - i : f->taglen;
            memcpy(tmp, f->held, f->heldlen);
            memcpy(tmp + f->heldlen, p + i, more);
            size_t tl = f->heldlen + more;
            size_t start;
            for (start = 0; start < f->heldlen; start++) {
                size_t cmp = tl - start < f->taglen ? tl - start : f->taglen;
                if (memcmp(tmp + start, f->tag, cmp) == 0)
                    break;
            }
            if (emit_some(emit, ctx, f->held, start) != 0)
                return -1;
            size_t from_held = f->heldlen;
            f->heldlen = 0;
            if (start == from_held)
                continue; /* no TAG begins in the held bytes */
            if (tl - start < f->taglen) {
                /* still only a prefix, and all of the input is in it */
                memmove(f->held, tmp + start, tl - start);
                f->heldlen = tl - start;
                return 0;
            }
            start_record(f);
            i += start + f->taglen - from_held;
            continue;
        }
        const char *hit = shx_memmem(p + i, n - i, f->tag, f->taglen);
        if (hit) {
            if (emit_some(emit, ctx, p + i, (size_t)(hit - (p + i))) != 0)
                return -1;
            start_record(f);
            i = (size_t)(hit - p) + f->taglen;
            continue;
        }
        size_t k = tag_prefix_at_end(f, p + i, n - i);
        if (emit_some(emit, ctx, p + i, n - i - k) != 0)
            return -1;
        memcpy(f->held, p + n - k, k);
        f->heldlen = k;
        return 0;
    }
    return 0;
}

int shx_sentinel_feed(shx_sentinel *f, const char *data, size_t len, shx_emit_fn emit, void *ctx)
{
    return scan(f, data, len, emit, ctx);
}

int shx_sentinel_finish(shx_sentinel *f, shx_emit_fn emit, void *ctx)
{
    int rc = 0;
    if (f->in_record) {
        rc = emit_some(emit, ctx, f->tag, f->taglen);
        if (rc == 0)
            rc = emit_some(emit, ctx, f->record.data, f->record.len);
        f->in_record = 0; /* the record is emptied as the next one starts */
    }
    if (rc == 0 && f->heldlen)
        rc = emit_some(emit, ctx, f->held, f->heldlen);
    f->heldlen = 0;
    return rc;
}

void shx_sentinel_free(shx_sentinel *f)
{
    shx_buf_free(&f->record);
    shx_buf_free(&f->path);
}
