/*
 * pipe_sink - read stdin to EOF and print how many bytes came. When stdin
 * is a pipe it is first shrunk to one page, so that whoever writes into it
 * can only ever write a page at a time: the way to make a writer's cost per
 * write show.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    char buf[4096];
    unsigned long long total = 0;
    /* the shrink fails (EBUSY) while the pipe holds more than a page: try
     * again after each read until it holds less */
    int shrunk = 0;
    for (;;) {
        if (!shrunk && fcntl(0, F_SETPIPE_SZ, (int)sizeof buf) >= 0)
            shrunk = 1;
        ssize_t n = read(0, buf, sizeof buf);
        if (n > 0) {
            total += (unsigned long long)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            perror("pipe_sink: read");
            return 1;
        }
        break;
    }
    printf("%llu\n", total);
    return 0;
}
