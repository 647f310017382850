/*
 * test_inert.c - the check of whether a command's text can move its shell
 * (lib/shell/inert.c): the commands agents run most are inert; every way
 * the text can reach cd, a sourced file or text run later is not; and what
 * could set a variable is not stateless.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell/inert.h"

static int inert(const char *cmd)
{
    return shx_inert_command(cmd, strlen(cmd));
}

/* Every command of the NULL-terminated list as want says: check(cmd) is
 * 1 (what) or 0 (not what). */
static void check_each(int (*check)(const char *, size_t), const char *what,
                       const char *const *cmds, int want)
{
    for (const char *const *c = cmds; *c; c++) {
        if (check(*c, strlen(*c)) != want)
            fail_msg("\"%s\": expected %s%s", *c, want ? "" : "not ", what);
    }
}

static void check_all(const char *const *cmds, int want)
{
    check_each(shx_inert_command, "inert", cmds, want);
}

static void test_common_commands_are_inert(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "true",
        "ls -la",
        "git status",
        "git diff --stat HEAD~1",
        "git log --format=%H -n 5",
        "make -j2 && make check",
        "pytest -x tests/test_api.py 2>&1 | tail -n 20",
        "grep -rn \"def main\" src",
        "grep -rn 'TODO: fix' .",
        "find . -name '*.py' -newer setup.py",
        "git add . && git commit -m 'first version'",
        "cat README.md; echo done",
        "python3 -m pip --version",
        "FOO=bar make all",
        "ls ~ /tmp >/dev/null",
        "server --port 8080 &",
        "sleep 1; echo 'it''s' \"here\"",
        "echo a # a comment",
        "ls ..",
        "cp a.txt b.txt ./dir/",
        "abcd xcdx cd_x x_cd",
        "",
        NULL};
    check_all(cmds, 1);
}

static void test_moving_names_are_not_inert(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "cd /tmp",
        "cd",
        "ls; cd ..",
        "make && cd build",
        "chdir /",
        "pushd /tmp",
        "popd",
        "source env.sh",
        "eval ls",
        "exec ls",
        "command -v ls",
        "builtin echo x",
        "trap 'echo' EXIT",
        "enable -n echo",
        "shopt -s expand_aliases; alias l=ls",
        "fc -l",
        "mapfile -t lines < f",
        "readarray lines < f",
        "complete -p",
        "compgen -c",
        "bind -l",
        "BASH_ALIASES",
        "BASH_CMDS",
        /* the name put together from quoted pieces, or standing between quotes */
        "c''d /tmp",
        "'c'\"d\" /tmp",
        "'cd' /tmp",
        "x'cd' /",
        "echo 'a'cd",
        "trap \"'c'd /\" EXIT",
        "ls /tmp/cd/x",
        "x=cd",
        NULL};
    check_all(cmds, 0);
}

static void test_expansions_are_not_inert(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "$x /tmp",
        "x=c; y=d; trap '$x$y /' EXIT",
        "`echo cd` /",
        "c\\d /",
        "echo 'a\\b'",
        "* /tmp",
        "[c]d /tmp",
        "c? /tmp",
        "{c,}d /",
        "{ ls; }",
        "ls; { ls; }",
        "ls | *",
        "ls && [c]d /",
        "ls\n* sub",
        "time -p * sub",
        "time *",
        "! * sub",
        "if * sub; then ls; fi",
        "X=1 * sub",
        "2>/dev/null * sub",
        ">out * sub",
        "ls>out *.c",
        "function f { . x; }",
        "(ls)",
        "f() { ls; }",
        "ls <(true)",
        "echo 'unterminated",
        "echo \"unterminated",
        NULL};
    check_all(cmds, 0);
    /* inside quotes the pattern characters are plain text; outside, a
     * pattern is harmless among a plain command word's arguments */
    assert_true(inert("grep -n '[a-z]*(x)' f"));
    assert_true(inert("echo \"{*?}\""));
    static const char *const args[] = {"ls *.c", "wc -l lib/*/*.c | tail -1", "ls file? [ab]",
                                       "mkdir -p a/{b,c}", "pytest tests/test_*.py -x",
                                       "'ls' *", "ls -la *.c 2>/dev/null", "rm -rf build/*", NULL};
    check_all(args, 1);
    static const char nul[] = "ls\0cd";
    assert_false(shx_inert_command(nul, sizeof nul - 1));
    assert_false(shx_inert_command(NULL, 0));
}

static void test_dot_command_is_not_inert(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        ". ./env.sh",
        ".",
        "ls; . ./env.sh",
        "ls && . x",
        "ls\n. x",
        "x=1 . ./f",
        "if . ./f; then ls; fi",
        "time . ./f",
        "! . ./f",
        "2>/dev/null . ./f",
        "ls > out . x",
        "ls -la .",
        "\".\" ./f",
        "'.' f",
        "ls \" . \"",
        NULL};
    check_all(cmds, 0);
    /* a quoted word is never a reserved word: `.` after it is its argument */
    static const char *const args[] = {"find . -type f", "git add .", "ls .", "rg foo .",
                                       "cp -r src/x .", "ls ./.", "ls .. .",
                                       "\"ls\" .", "grep -rn 'a b' . | wc -l", "'if' .", NULL};
    check_all(args, 1);
}

/* Long texts stay linear: many dots, long words, long blanks. */
static void test_long_texts(void **state)
{
    (void)state;
    size_t n = 1 << 20;
    char *s = malloc(n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < n; i += 2) {
        s[i] = i == 0 ? 'x' : '.';
        s[i + 1] = ' ';
    }
    s[n] = '\0';
    assert_true(shx_inert_command(s, n)); /* "x . . . ...": each an argument */
    memset(s, 'a', n);
    assert_true(shx_inert_command(s, n));
    memcpy(s + n - 3, " cd", 3);
    assert_false(shx_inert_command(s, n));
    memset(s, ' ', n);
    s[n - 1] = '.';
    assert_false(shx_inert_command(s, n));
    free(s);
}

/* In a session that keeps the shell's state: nothing that could set it */
static void test_stateless(void **state)
{
    (void)state;
    static const char *const still[] = {"true", "ls -la", "git status --short",
                                        "grep -n 'a=b' f", "make -j2 && make check",
                                        "echo \"x=1\"", NULL};
    check_each(shx_inert_stateless, "stateless", still, 1);
    static const char *const setting[] = {
        "x=1", "X=1 true", "F+=6", "git log --format=%H", "export A=1", "ex\"port\" C=3",
        "unset A", "readonly A", "read line < f", "getopts ab o", "set -a", "shopt -s nullglob",
        "local x", "declare -x A", "typeset A", "let x", "printf -v x y", "for x in a; do :; done",
        "select x in a; do :; done", "shift", "sleep 1 & wait -p pid", "coproc cat",
        "true {fd}>/dev/null", "exec {fd}<&-", "test -v 'a[y=1]'", "\"[\" -v 'a[y=1]' ]",
        "test -f x && echo y", "grep '[0-9]' f",
        "cd /tmp", "$x", NULL};
    check_each(shx_inert_stateless, "stateless", setting, 0);
    assert_false(shx_inert_stateless(NULL, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_common_commands_are_inert),
        cmocka_unit_test(test_moving_names_are_not_inert),
        cmocka_unit_test(test_expansions_are_not_inert),
        cmocka_unit_test(test_dot_command_is_not_inert),
        cmocka_unit_test(test_long_texts),
        cmocka_unit_test(test_stateless),
    };
    return cmocka_run_group_tests_name("inert", tests, NULL, NULL);
}
