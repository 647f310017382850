/*
 * test_ansi.c - the ANSI stripper: a table of input -> expected output for
 * each rule, real terminal captures from test/data/ansi/ (see the README
 * there) against the plain text of the same command, the chunking invariant
 * (any split of the input gives the output of feeding it whole) and the
 * bounds on held state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stream/ansi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------
 * Helpers
 * ------------------------------------------------------------------------ */

static uint64_t rng_state;

static uint32_t rng(void)
{
    /* xorshift64*: fixed seeds make a failing chunking reproducible. */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ULL) >> 32);
}

/* Chunk sizes for strip_chunked(): a fixed size, or random ones. */
#define CHUNK_RANDOM 0

/* Strip `in` fed in pieces of `chunk` bytes (CHUNK_RANDOM: random pieces
 * of 0-40 bytes, empty feeds included), then finish. */
static shx_buf strip_chunked(const char *in, size_t n, size_t chunk)
{
    shx_ansi a;
    shx_buf out = SHX_BUF_INIT;
    shx_ansi_init(&a);
    size_t i = 0;
    while (i < n) {
        size_t k = chunk ? chunk : rng() % 41;
        if (k > n - i)
            k = n - i;
        assert_int_equal(shx_ansi_feed(&a, in + i, k, &out), 0);
        i += k;
    }
    assert_int_equal(shx_ansi_finish(&a, &out), 0);
    /* finish re-initialises and releases the line. */
    assert_null(a.cells);
    assert_int_equal(a.len, 0);
    shx_ansi_free(&a);
    return out;
}

static shx_buf strip(const char *in, size_t n)
{
    return strip_chunked(in, n, n ? n : 1);
}

/* Print bytes with controls and non-ASCII escaped, for failure messages. */
static void show(const char *label, const char *s, size_t n)
{
    print_error("%s (%zu bytes): \"", label, n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '\n')
            print_error("\\n");
        else if (c == '\\' || c == '"')
            print_error("\\%c", c);
        else if (c < 0x20 || c >= 0x7F)
            print_error("\\x%02x", c);
        else
            print_error("%c", c);
    }
    print_error("\"\n");
}

static void expect_bytes(const char *what, const shx_buf *got, const char *want, size_t wlen)
{
    if (got->len == wlen && (wlen == 0 || memcmp(got->data, want, wlen) == 0))
        return;
    print_error("%s: output differs\n", what);
    show("expected", want, wlen);
    show("got     ", got->data ? got->data : "", got->len);
    fail();
}

/* The core invariant: every chunking gives the whole-feed output. */
static void check_chunkings(const char *what, const char *in, size_t n, const shx_buf *whole)
{
    static const size_t sizes[] = {1, 2, 3, 7, 64};
    char label[256];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        shx_buf got = strip_chunked(in, n, sizes[s]);
        snprintf(label, sizeof label, "%s, chunks of %zu", what, sizes[s]);
        expect_bytes(label, &got, whole->data ? whole->data : "", whole->len);
        shx_buf_free(&got);
    }
    for (int round = 0; round < 20; round++) {
        rng_state = 0x9E3779B97F4A7C15ULL + (uint64_t)round;
        shx_buf got = strip_chunked(in, n, CHUNK_RANDOM);
        snprintf(label, sizeof label, "%s, random chunks (round %d)", what, round);
        expect_bytes(label, &got, whole->data ? whole->data : "", whole->len);
        shx_buf_free(&got);
    }
}

static void check(const char *what, const char *in, size_t n, const char *want, size_t wlen)
{
    shx_buf whole = strip(in, n);
    expect_bytes(what, &whole, want, wlen);
    check_chunkings(what, in, n, &whole);
    shx_buf_free(&whole);
}

/* ------------------------------------------------------------------------
 * The table
 * ------------------------------------------------------------------------ */

struct tcase {
    const char *name;
    const char *in;
    size_t in_len;
    const char *out;
    size_t out_len;
};

#define T(name, in, out) {name, in, sizeof(in) - 1, out, sizeof(out) - 1}

static const struct tcase csi_cases[] = {
    T("SGR colour", "\x1b[31mred\x1b[0m plain\n", "red plain\n"),
    T("SGR reset without params", "\x1b[1mbold\x1b[m\n", "bold\n"),
    T("SGR 256 colours", "\x1b[1;38;5;208morange\x1b[39;49m", "orange"),
    T("SGR truecolour with ':' sub-params", "\x1b[38:2::255:0:0mtrue\x1b[0m", "true"),
    T("SGR truecolour with ';'", "\x1b[48;2;10;20;30mbg\x1b[0m", "bg"),
    T("private mode: hide/show cursor", "a\x1b[?25lb\x1b[?25hc", "abc"),
    T("private mode: bracketed paste, alt screen", "\x1b[?2004h\x1b[?1049hx\x1b[?1049l\x1b[?2004l", "x"),
    T("erase screen and home", "\x1b[2J\x1b[Hclear\n", "clear\n"),
    T("vertical moves are removed, not acted on", "\x1b[1Aup\x1b[2Bdown\x1b[3;4Hpos\n", "updownpos\n"),
    T("scroll region, save/restore cursor", "\x1b[1;24r\x1b[sx\x1b[u", "x"),
    T("CSI with intermediate (DECSCUSR)", "\x1b[2 qcursor", "cursor"),
    T("CSI soft reset", "\x1b[!pok", "ok"),
    T("xterm modifyOtherKeys", "x\x1b[>4;1my", "xy"),
    T("device status query", "\x1b[6n\x1b[cq", "q"),
    T("8-bit 0x9B is not CSI", "a\x9b" "31mb", "a\x9b" "31mb"),
    T("U+009B (C2 9B) is a character, not CSI", "a\xc2\x9b" "31mb", "a\xc2\x9b" "31mb"),
    T("private CSI is not a cursor move", "abc\x1b[?2Dx\n", "abcx\n"),
};

static const struct tcase string_cases[] = {
    T("OSC title, BEL", "\x1b]0;my title\x07text\n", "text\n"),
    T("OSC title, ST", "\x1b]2;my title\x1b\\text\n", "text\n"),
    T("OSC 8 hyperlink, ST", "see \x1b]8;;https://example.org/a?b=c\x1b\\the docs\x1b]8;;\x1b\\ now\n",
      "see the docs now\n"),
    T("OSC 8 hyperlink with id, BEL", "\x1b]8;id=x1;file:///etc/hosts\x07hosts\x1b]8;;\x07!", "hosts!"),
    T("OSC 7 cwd report", "\x1b]7;file://host/tmp\x1b\\$ ", "$ "),
    T("OSC 133 shell integration", "\x1b]133;A\x07prompt\x1b]133;B\x07", "prompt"),
    T("OSC 52 clipboard", "\x1b]52;c;aGVsbG8=\x07" "done", "done"),
    T("DCS", "\x1bP1$r0m\x1b\\ok", "ok"),
    T("DCS tmux passthrough", "\x1bPtmux;\x1b\x1b]0;t\x07\x1b\\ok", "ok"),
    T("SOS", "\x1bXsos data\x1b\\ok", "ok"),
    T("PM", "\x1b^privacy\x1b\\ok", "ok"),
    T("APC", "\x1b_Gf=100;AAAA\x1b\\ok", "ok"),
    T("newline inside a string belongs to it", "\x1b]0;a\nb\x07" "c\n", "c\n"),
    T("CAN aborts a string", "\x1b]0;ti\x18tle", "tle"),
    T("SUB aborts a string", "\x1bPq#0\x1atext", "text"),
    T("ESC inside a string ends it and starts a CSI", "\x1b]0;title\x1b[31mred\x1b[0m", "red"),
    T("ESC ESC inside a string", "\x1b]0;t\x1b\x1b\\x", "x"),
    T("unterminated OSC at end of stream is dropped", "text\x1b]0;unfinished", "text"),
    T("empty OSC", "\x1b]\x07x", "x"),
};

static const struct tcase esc_cases[] = {
    T("charset selects", "\x1b(Babc\x1b)0def\x1b*A\x1b+B\n", "abcdef\n"),
    T("DEC line drawing is not translated", "\x1b(0lqqk\x1b(B\n", "lqqk\n"),
    T("DECALN and friends (ESC # n)", "\x1b#8x\x1b#3y", "xy"),
    T("ESC % G (select UTF-8)", "\x1b%Gutf", "utf"),
    T("keypad modes", "\x1b=a\x1b>b", "ab"),
    T("save/restore cursor", "\x1b" "7a\x1b" "8b", "ab"),
    T("index, reverse index, next line", "\x1b" "Da\x1bMb\x1b" "Ec", "abc"),
    T("full reset", "\x1b" "cx", "x"),
    T("set tab stop", "a\x1bHb", "ab"),
    T("7-bit ST alone", "a\x1b\\b", "ab"),
};

static const struct tcase cr_cases[] = {
    T("CRLF is LF", "one\r\ntwo\r\n", "one\ntwo\n"),
    T("CR overwrites", "abcdef\rXY\n", "XYcdef\n"),
    T("progress bar", "10%\r50%\r100%\n", "100%\n"),
    T("CR CR LF", "a\r\r\nb\r\n", "a\nb\n"),
    T("CR at end of stream", "abc\r", "abc"),
    T("CR then shorter text keeps the tail", "downloading\rdone\n", "doneloading\n"),
    T("npm style: CR + erase line", "long progress line\r\x1b[2Kdone\n", "done\n"),
    T("CR + erase to end", "long progress line\r\x1b[Kdone\n", "done\n"),
    T("erase to end after overwrite", "abcdef\rxy\x1b[K\n", "xy\n"),
    T("erase to end with explicit 0", "abcdef\rxy\x1b[0K\n", "xy\n"),
    T("CR counts code points: 2-byte", "h\xc3\xa9llo\rHE\n", "HEllo\n"),
    T("CR counts code points: 3-byte", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\rab\n", "ab\xe8\xaa\x9e\n"),
    T("CR: ASCII over 3-byte chars", "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\r$\n", "$\xe2\x82\xac\xe2\x82\xac\n"),
    T("CR: 4-byte char overwrites ASCII", "abc\r\xf0\x9f\x98\x80\n", "\xf0\x9f\x98\x80" "bc\n"),
    T("CR: ASCII overwrites 4-byte char", "\xf0\x9f\x98\x80x\rY\n", "Yx\n"),
    T("CR inside a line of colours", "\x1b[32m50%\x1b[0m\r\x1b[32m100%\x1b[0m\n", "100%\n"),
    T("LF after CR keeps the whole line", "hello\r\n", "hello\n"),
};

static const struct tcase bs_cases[] = {
    T("backspace", "a\bb", "b"),
    T("overstrike underline", "_\bX_\bY\n", "XY\n"),
    T("overstrike bold", "X\bXY\bY\n", "XY\n"),
    T("backspace not past column 0", "\b\bq", "q"),
    T("backspace twice", "ab\b\bc\n", "cb\n"),
    T("backspace over a 2-byte char", "\xc3\xa9\bx\n", "x\n"),
    T("backspace over a 4-byte char", "a\xf0\x9f\x98\x80\bb\n", "ab\n"),
    T("backspace then erase", "abc\b\b\x1b[K\n", "a\n"),
    T("spinner", "wait |\b/\b-\b\\\b|\bdone\n", "wait done\n"),
};

static const struct tcase move_cases[] = {
    T("CHA", "abcdef\x1b[3Gx\n", "abxdef\n"),
    T("CHA default is column 1", "abc\x1b[Gx\n", "xbc\n"),
    T("CHA 0 is column 1", "abc\x1b[0Gx\n", "xbc\n"),
    T("HPA", "abcdef\x1b[2`x\n", "axcdef\n"),
    T("CUB", "abc\x1b[2Dx\n", "axc\n"),
    T("CUB default 1", "abc\x1b[Dx\n", "abx\n"),
    T("CUB not past column 0", "abc\x1b[99Dx\n", "xbc\n"),
    T("CUF into blank space pads", "a\x1b[3Cb\n", "a   b\n"),
    T("CUF within text skips", "abcdef\r\x1b[2Cx\n", "abxdef\n"),
    T("HPR", "a\x1b[2ab\n", "a  b\n"),
    T("CHA past the end pads", "ab\x1b[6Gx\n", "ab   x\n"),
    T("cursor past the end without text adds nothing", "ab\x1b[9C\n", "ab\n"),
    T("EL 1 erases start to cursor", "abcdef\x1b[4G\x1b[1K|\n", "   |ef\n"),
    T("EL 1 at the end erases all", "abc\x1b[1K\n", "\n"),
    T("EL 2 keeps the cursor column", "abc\x1b[2Kx\n", "   x\n"),
    T("EL 2 then CHA 1", "abc\x1b[2K\x1b[1Gx\n", "x\n"),
    T("EL with unknown parameter is ignored", "abc\r\x1b[5K\n", "abc\n"),
    T("ECH blanks", "abcdef\x1b[1G\x1b[2Xz\n", "z cdef\n"),
    T("ECH to the end cuts", "abcdef\x1b[4G\x1b[9X\n", "abc\n"),
    T("CSI with second param uses the first", "abcdef\x1b[2;5Gx\n", "axcdef\n"),
};

static const struct tcase c0_cases[] = {
    T("BEL dropped", "a\x07" "b\n", "ab\n"),
    T("NUL dropped", "a\0b", "ab"),
    T("SO/SI dropped", "a\x0e" "b\x0f" "c", "abc"),
    T("VT, FF dropped", "a\vb\fc\n", "abc\n"),
    T("DEL dropped", "a\x7f" "b", "ab"),
    T("other C0 dropped", "\x01\x02\x03\x04\x05\x06\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1c\x1d\x1e\x1fz",
      "z"),
    T("tab kept", "\tcol1\tcol2\n", "\tcol1\tcol2\n"),
    T("tab is one column for CR", "\tab\rX\n", "Xab\n"),
    T("blank lines kept", "\n\n\r\n", "\n\n\n"),
};

static const struct tcase malformed_cases[] = {
    T("ESC ESC", "\x1b\x1b[31mx", "x"),
    T("ESC then newline", "a\x1b\nb", "a\nb"),
    T("ESC then CR", "abc\x1b\rX", "Xbc"),
    T("ESC then non-ASCII", "\x1b\xc3\xa9t\xc3\xa9", "\xc3\xa9t\xc3\xa9"),
    T("CSI broken by newline", "\x1b[31\nx", "\nx"),
    T("CSI broken by ESC", "\x1b[12\x1b[0mx", "x"),
    T("CSI broken by non-ASCII", "\x1b[3\xc3\xa9!", "\xc3\xa9!"),
    T("CSI broken by BEL", "\x1b[3\x07x", "x"),
    T("CSI broken by backspace acts on it", "ab\x1b[3\bx", "ax"),
    T("DEL inside CSI ignored", "\x1b[\x7f" "31mX", "X"),
    T("charset select broken by newline", "\x1b(\nx", "\nx"),
    T("ESC + intermediate broken by ESC", "\x1b#\x1b[1mx", "x"),
    T("ESC at end of stream", "abc\x1b", "abc"),
    T("CSI at end of stream", "abc\x1b[", "abc"),
    T("CSI params at end of stream", "abc\x1b[12;", "abc"),
    T("ESC + intermediate at end of stream", "abc\x1b(", "abc"),
    T("string ESC at end of stream", "abc\x1b]0;t\x1b", "abc"),
    T("huge CSI parameter saturates", "ab\x1b[99999999999999999999Dx", "xb"),
};

static const struct tcase utf8_cases[] = {
    T("valid UTF-8 passes", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\n"),
    T("invalid bytes pass", "\xff\xfe a \xc3(\n", "\xff\xfe a \xc3(\n"),
    T("invalid bytes are one column each", "\xff\xfe" "ab\r12\n", "12ab\n"),
    T("lone continuation bytes", "\x80\xbf\rX\n", "X\xbf\n"),
    T("overlong is invalid: 2 columns", "\xc0\xaf" "z\rQ\n", "Q\xaf" "z\n"),
    T("surrogate is invalid: 3 columns", "\xed\xa0\x80\rab\n", "ab\x80\n"),
    T("above U+10FFFF is invalid", "\xf4\x90\x80\x80\rX\n", "X\x90\x80\x80\n"),
    T("truncated char at end of stream", "ab\xe2\x82", "ab\xe2\x82"),
    T("truncated char before ASCII", "\xe2\x82" "a\rXY\n", "XYa\n"),
    T("char cut by an escape keeps its bytes", "\xe2\x82\x1b[0m\xac", "\xe2\x82\xac"),
    T("invalid byte overwrites a char", "\xc3\xa9\r\xff\n", "\xff\n"),
    T("char overwrites an invalid byte", "\xff" "b\r\xc3\xa9\n", "\xc3\xa9" "b\n"),
    T("bad second byte restarts at it", "\xe0\x80\xa0\rX\n", "X\x80\xa0\n"),
};

static void run_table(const struct tcase *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check(t[i].name, t[i].in, t[i].in_len, t[i].out, t[i].out_len);
}

#define RUN_TABLE(t) run_table(t, sizeof(t) / sizeof((t)[0]))

static void test_csi(void **state)
{
    (void)state;
    RUN_TABLE(csi_cases);
}

static void test_strings(void **state)
{
    (void)state;
    RUN_TABLE(string_cases);
}

static void test_esc(void **state)
{
    (void)state;
    RUN_TABLE(esc_cases);
}

static void test_cr(void **state)
{
    (void)state;
    RUN_TABLE(cr_cases);
}

static void test_backspace(void **state)
{
    (void)state;
    RUN_TABLE(bs_cases);
}

static void test_moves(void **state)
{
    (void)state;
    RUN_TABLE(move_cases);
}

static void test_c0(void **state)
{
    (void)state;
    RUN_TABLE(c0_cases);
}

static void test_malformed(void **state)
{
    (void)state;
    RUN_TABLE(malformed_cases);
}

static void test_utf8(void **state)
{
    (void)state;
    RUN_TABLE(utf8_cases);
}

/* ------------------------------------------------------------------------
 * Bounds
 * ------------------------------------------------------------------------ */

/* A string sequence without terminator is given up after SHX_ANSI_STR_MAX
 * body bytes; what follows is text again. */
static void test_string_bound(void **state)
{
    (void)state;
    static const char intro[] = "]PX^_";
    for (size_t k = 0; k < sizeof intro - 1; k++) {
        shx_buf in = SHX_BUF_INIT, want = SHX_BUF_INIT;
        /* Exactly at the bound and terminated: all dropped. */
        assert_int_equal(shx_buf_putc(&in, '\x1b'), 0);
        assert_int_equal(shx_buf_putc(&in, intro[k]), 0);
        for (size_t i = 0; i < SHX_ANSI_STR_MAX; i++)
            assert_int_equal(shx_buf_putc(&in, 'x'), 0);
        assert_int_equal(shx_buf_puts(&in, "\x1b\\kept\n"), 0);
        assert_int_equal(shx_buf_puts(&want, "kept\n"), 0);
        /* One byte more than the bound: abandoned, the rest is text. */
        assert_int_equal(shx_buf_putc(&in, '\x1b'), 0);
        assert_int_equal(shx_buf_putc(&in, intro[k]), 0);
        for (size_t i = 0; i < SHX_ANSI_STR_MAX; i++)
            assert_int_equal(shx_buf_putc(&in, 'y'), 0);
        assert_int_equal(shx_buf_puts(&in, "visible\x07more\n"), 0);
        assert_int_equal(shx_buf_puts(&want, "visiblemore\n"), 0);
        check("string bound", in.data, in.len, want.data, want.len);
        shx_buf_free(&in);
        shx_buf_free(&want);
    }
}

/* The bound can fall inside a UTF-8 character of the string's body: the
 * whole character is dropped with the string, never half of it printed. */
static void test_string_bound_utf8(void **state)
{
    (void)state;
    for (size_t pad = 1; pad <= 3; pad++) {
        shx_buf in = SHX_BUF_INIT;
        assert_int_equal(shx_buf_puts(&in, "\x1b]"), 0);
        for (size_t i = 0; i < SHX_ANSI_STR_MAX - pad; i++)
            assert_int_equal(shx_buf_putc(&in, 'a'), 0);
        assert_int_equal(shx_buf_puts(&in, "\xf0\x9f\x99\x82x\n"), 0); /* U+1F642 */
        check("string bound inside a character", in.data, in.len, "x\n", 2);
        shx_buf_free(&in);
    }
}

/* A megabyte of unterminated OSC holds no memory: it is counted, not kept. */
static void test_string_holds_nothing(void **state)
{
    (void)state;
    shx_ansi a;
    shx_buf out = SHX_BUF_INIT;
    char chunk[4096];
    memset(chunk, 'z', sizeof chunk);
    shx_ansi_init(&a);
    assert_int_equal(shx_ansi_feed(&a, "\x1b]0;", 4, &out), 0);
    assert_int_equal(shx_ansi_feed(&a, chunk, SHX_ANSI_STR_MAX - 2, &out), 0);
    assert_int_equal(out.len, 0);
    assert_null(a.cells);
    /* Past the bound the z's are text. */
    for (int i = 0; i < 256; i++)
        assert_int_equal(shx_ansi_feed(&a, chunk, sizeof chunk, &out), 0);
    assert_true(a.cap <= SHX_ANSI_LINE_MAX);
    assert_int_equal(shx_ansi_finish(&a, &out), 0);
    assert_int_equal(out.len, 256 * sizeof chunk);
    shx_buf_free(&out);
}

/* A line longer than SHX_ANSI_LINE_MAX columns is emitted as it is when the
 * bound is reached, and \r then only reaches back to the bound. */
static void test_line_bound(void **state)
{
    (void)state;
    shx_buf in = SHX_BUF_INIT, want = SHX_BUF_INIT;
    for (size_t i = 0; i < SHX_ANSI_LINE_MAX + 100; i++)
        assert_int_equal(shx_buf_putc(&in, (char)('a' + i % 26)), 0);
    assert_int_equal(shx_buf_puts(&in, "\rZ\n"), 0);
    assert_int_equal(shx_buf_append(&want, in.data, SHX_ANSI_LINE_MAX), 0);
    assert_int_equal(shx_buf_putc(&want, 'Z'), 0);
    assert_int_equal(shx_buf_append(&want, in.data + SHX_ANSI_LINE_MAX + 1, 99), 0);
    assert_int_equal(shx_buf_putc(&want, '\n'), 0);
    check("line bound", in.data, in.len, want.data, want.len);

    /* The same with 4-byte characters: the bound is in columns. */
    shx_buf_clear(&in);
    shx_buf_clear(&want);
    for (size_t i = 0; i < SHX_ANSI_LINE_MAX + 3; i++)
        assert_int_equal(shx_buf_puts(&in, "\xf0\x9f\x98\x80"), 0);
    assert_int_equal(shx_buf_puts(&in, "\rab"), 0);
    assert_int_equal(shx_buf_append(&want, in.data, 4 * (SHX_ANSI_LINE_MAX)), 0);
    assert_int_equal(shx_buf_puts(&want, "ab\xf0\x9f\x98\x80"), 0);
    check("line bound, 4-byte chars", in.data, in.len, want.data, want.len);

    /* The bound is reached exactly when a column past it is written. */
    shx_ansi a;
    shx_buf out = SHX_BUF_INIT;
    shx_ansi_init(&a);
    assert_int_equal(shx_ansi_feed(&a, in.data, 4 * SHX_ANSI_LINE_MAX, &out), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(a.cap, SHX_ANSI_LINE_MAX);
    assert_int_equal(shx_ansi_feed(&a, "x", 1, &out), 0);
    assert_int_equal(out.len, 4 * SHX_ANSI_LINE_MAX);
    assert_int_equal(a.cap, SHX_ANSI_LINE_MAX);
    shx_ansi_free(&a);
    assert_null(a.cells);
    shx_buf_free(&out);
    shx_buf_free(&in);
    shx_buf_free(&want);
}

/* Cursor moves into blank space are capped, so a few bytes of input cannot
 * become a large amount of padding. */
static void test_move_bound(void **state)
{
    (void)state;
    shx_buf want = SHX_BUF_INIT;
    for (size_t i = 0; i < SHX_ANSI_MOVE_MAX; i++)
        assert_int_equal(shx_buf_putc(&want, ' '), 0);
    assert_int_equal(shx_buf_puts(&want, "xy\n"), 0);
    static const char in1[] = "\x1b[65535Cx\x1b[99999Gy\n";
    check("CUF/CHA capped", in1, sizeof in1 - 1, want.data, want.len);
    static const char in2[] = "\x1b[600C\x1b[600Cx\x1b[1Cy\n";
    check("CUF repeated capped", in2, sizeof in2 - 1, want.data, want.len);

    /* Within text longer than the cap, moves reach all of it. */
    shx_buf in = SHX_BUF_INIT;
    shx_buf_clear(&want);
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(shx_buf_putc(&in, '.'), 0);
    assert_int_equal(shx_buf_puts(&in, "\x1b[900G|\x1b[99C!\n"), 0);
    for (size_t i = 0; i < 1000; i++)
        assert_int_equal(shx_buf_putc(&want, i == 899 ? '|' : i == 999 ? '!' : '.'), 0);
    assert_int_equal(shx_buf_putc(&want, '\n'), 0);
    check("moves within long text", in.data, in.len, want.data, want.len);
    shx_buf_free(&in);
    shx_buf_free(&want);
}

/* ------------------------------------------------------------------------
 * Emission policy, flush, finish
 * ------------------------------------------------------------------------ */

static void expect_str(const shx_buf *b, const char *want)
{
    expect_bytes("emission", b, want, strlen(want));
}

static void test_emission(void **state)
{
    (void)state;
    shx_ansi a;
    shx_buf out = SHX_BUF_INIT;
    shx_ansi_init(&a);

    /* A partial line is held: \r could still rewrite it. */
    assert_int_equal(shx_ansi_feed(&a, "10%", 3, &out), 0);
    expect_str(&out, "");
    assert_int_equal(shx_ansi_feed(&a, "\r50%", 4, &out), 0);
    expect_str(&out, "");
    /* A complete line goes out at its \n; what follows is held. */
    assert_int_equal(shx_ansi_feed(&a, "\r100%\nnext", 10, &out), 0);
    expect_str(&out, "100%\n");
    assert_int_equal(shx_ansi_feed(&a, " line\n", 6, &out), 0);
    expect_str(&out, "100%\nnext line\n");

    /* flush pushes out a prompt; a later \r starts from a fresh line. */
    assert_int_equal(shx_ansi_feed(&a, "Password: ", 10, &out), 0);
    assert_int_equal(shx_ansi_flush(&a, &out), 0);
    expect_str(&out, "100%\nnext line\nPassword: ");
    assert_int_equal(shx_ansi_feed(&a, "abc\rX", 5, &out), 0);
    assert_int_equal(shx_ansi_flush(&a, &out), 0);
    expect_str(&out, "100%\nnext line\nPassword: Xbc");
    /* Flushing nothing adds nothing. */
    assert_int_equal(shx_ansi_flush(&a, &out), 0);
    expect_str(&out, "100%\nnext line\nPassword: Xbc");

    /* finish: the partial line, no newline added; a is reusable after it. */
    assert_int_equal(shx_ansi_feed(&a, "\ntail", 5, &out), 0);
    assert_int_equal(shx_ansi_finish(&a, &out), 0);
    expect_str(&out, "100%\nnext line\nPassword: Xbc\ntail");
    assert_null(a.cells);
    shx_buf_clear(&out);
    assert_int_equal(shx_ansi_feed(&a, "again\n", 6, &out), 0);
    expect_str(&out, "again\n");
    assert_int_equal(shx_ansi_finish(&a, &out), 0);
    /* finish twice, free after finish: harmless. */
    assert_int_equal(shx_ansi_finish(&a, &out), 0);
    expect_str(&out, "again\n");
    shx_ansi_free(&a);
    shx_ansi_free(&a);
    shx_ansi_free(NULL);
    shx_buf_free(&out);
}

/* flush leaves an escape sequence or a UTF-8 character that the last feed
 * cut in two pending: they complete on the next feed. */
static void test_flush_keeps_pending(void **state)
{
    (void)state;
    shx_ansi a;
    shx_buf out = SHX_BUF_INIT;
    shx_ansi_init(&a);
    assert_int_equal(shx_ansi_feed(&a, "a\x1b[3", 4, &out), 0);
    assert_int_equal(shx_ansi_flush(&a, &out), 0);
    expect_str(&out, "a");
    assert_int_equal(shx_ansi_feed(&a, "1mb", 3, &out), 0);
    assert_int_equal(shx_ansi_feed(&a, "x\xc3", 2, &out), 0);
    assert_int_equal(shx_ansi_flush(&a, &out), 0);
    expect_str(&out, "abx");
    assert_int_equal(shx_ansi_feed(&a, "\xa9", 1, &out), 0);
    assert_int_equal(shx_ansi_feed(&a, "\x1b]0;ti", 6, &out), 0);
    assert_int_equal(shx_ansi_flush(&a, &out), 0);
    expect_str(&out, "abx\xc3\xa9");
    assert_int_equal(shx_ansi_feed(&a, "tle\x07" "c", 5, &out), 0);
    assert_int_equal(shx_ansi_finish(&a, &out), 0);
    expect_str(&out, "abx\xc3\xa9" "c");
    shx_buf_free(&out);
}

/* Output is appended: what is already in out stays. */
static void test_appends(void **state)
{
    (void)state;
    shx_ansi a;
    shx_buf out = SHX_BUF_INIT;
    assert_int_equal(shx_buf_puts(&out, "before|"), 0);
    shx_ansi_init(&a);
    assert_int_equal(shx_ansi_feed(&a, "\x1b[1mx\x1b[0m\n", 10, &out), 0);
    assert_int_equal(shx_ansi_feed(&a, NULL, 0, &out), 0);
    assert_int_equal(shx_ansi_finish(&a, &out), 0);
    expect_str(&out, "before|x\n");
    assert_int_equal(out.data[out.len], '\0');
    shx_buf_free(&out);
}

/* ------------------------------------------------------------------------
 * Real captures
 * ------------------------------------------------------------------------ */

/* test/data/ansi next to this source; __FILE__ is relative to the directory
 * the compiler ran in, which is the repository root for make and CI. */
static void data_path(char *dst, size_t cap, const char *name)
{
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');
    int dirlen = slash ? (int)(slash - file + 1) : 0;
    snprintf(dst, cap, "%.*sdata/ansi/%s", dirlen, file, name);
}

static char *slurp(const char *name, size_t *len)
{
    char path[4096];
    data_path(path, sizeof path, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("cannot open %s (run the test from the repository root)\n", path);
        fail();
    }
    shx_buf b = SHX_BUF_INIT;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        assert_int_equal(shx_buf_append(&b, chunk, n), 0);
    assert_int_equal(ferror(f), 0);
    fclose(f);
    return shx_buf_steal(&b, len);
}

static void check_capture(const char *base)
{
    char name[256];
    size_t rlen, tlen;
    snprintf(name, sizeof name, "%s.raw", base);
    char *raw = slurp(name, &rlen);
    snprintf(name, sizeof name, "%s.txt", base);
    char *txt = slurp(name, &tlen);
    /* A capture without escapes would test nothing. */
    assert_non_null(memchr(raw, '\x1b', rlen));
    check(base, raw, rlen, txt, tlen);
    free(raw);
    free(txt);
}

static void test_capture_ls_long(void **state)
{
    (void)state;
    check_capture("ls_long");
}

static void test_capture_ls_pty(void **state)
{
    (void)state;
    check_capture("ls_pty");
}

static void test_capture_git_log(void **state)
{
    (void)state;
    check_capture("git_log");
}

static void test_capture_git_clone(void **state)
{
    (void)state;
    check_capture("git_clone_pty");
}

static void test_capture_grep(void **state)
{
    (void)state;
    check_capture("grep");
}

static void test_capture_progress(void **state)
{
    (void)state;
    check_capture("progress");
}

static void test_capture_pip_rich(void **state)
{
    (void)state;
    check_capture("pip_rich");
}

static void test_capture_node(void **state)
{
    (void)state;
    check_capture("node_readline");
}

/* ------------------------------------------------------------------------
 * Random input: the chunking invariant and the absence of crashes on
 * everything the tables did not think of.
 * ------------------------------------------------------------------------ */

static void test_random_chunking(void **state)
{
    (void)state;
    /* Bytes that start, continue, break or end sequences, plus text. */
    static const unsigned char alphabet[] = {
        0x1b, 0x1b, 0x1b, '[', '[', ']', 'P', '_', '\\', 0x07, '\r', '\r', '\n', '\b', '\t',
        '0', '1', '2', '9', ';', ':', '?', ' ', '(', '#', 'm', 'K', 'G', 'C', 'D', 'X', 'a',
        'z', 0x18, 0x7f, 0x00, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0x9b,
    };
    char in[600];
    for (int iter = 0; iter < 300; iter++) {
        rng_state = 0xD1B54A32D192ED03ULL ^ (uint64_t)iter;
        size_t n = rng() % sizeof in;
        for (size_t i = 0; i < n; i++)
            in[i] = (char)alphabet[rng() % sizeof alphabet];
        shx_buf whole = strip(in, n);
        /* No input byte can produce output bytes other than itself,
         * spaces or newlines, and padding is bounded. */
        assert_true(whole.len <= n + SHX_ANSI_MOVE_MAX * (n / 3 + 1));
        char label[64];
        snprintf(label, sizeof label, "random input %d", iter);
        check_chunkings(label, in, n, &whole);
        shx_buf_free(&whole);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csi),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_esc),
        cmocka_unit_test(test_cr),
        cmocka_unit_test(test_backspace),
        cmocka_unit_test(test_moves),
        cmocka_unit_test(test_c0),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_utf8),
        cmocka_unit_test(test_string_bound),
        cmocka_unit_test(test_string_bound_utf8),
        cmocka_unit_test(test_string_holds_nothing),
        cmocka_unit_test(test_line_bound),
        cmocka_unit_test(test_move_bound),
        cmocka_unit_test(test_emission),
        cmocka_unit_test(test_flush_keeps_pending),
        cmocka_unit_test(test_appends),
        cmocka_unit_test(test_capture_ls_long),
        cmocka_unit_test(test_capture_ls_pty),
        cmocka_unit_test(test_capture_git_log),
        cmocka_unit_test(test_capture_git_clone),
        cmocka_unit_test(test_capture_grep),
        cmocka_unit_test(test_capture_progress),
        cmocka_unit_test(test_capture_pip_rich),
        cmocka_unit_test(test_capture_node),
        cmocka_unit_test(test_random_chunking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
