/*
 * hup_late - take a terminal's hangup in a handler, then set SIGHUP back
 * to its default and run on: what a shell's child does when the hangup
 * lands between its fork and its exec (it resets its signals and execs).
 * It creates the file named by its argument once the handler is in place,
 * waits up to 30 s for the hangup, resets SIGHUP 50 ms after it (past any
 * resend made at once), and then runs for 30 s more unless a SIGHUP ends it.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t hangups;

static void on_hangup(int sig)
{
    (void)sig;
    hangups++;
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: hup_late READY-FILE\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_hangup;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGHUP, &sa, NULL) != 0) {
        perror("hup_late: sigaction");
        return 1;
    }
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        perror("hup_late: ready file");
        return 1;
    }
    close(fd);
    for (int i = 0; i < 3000 && !hangups; i++)
        nap_ms(10);
    nap_ms(50);
    signal(SIGHUP, SIG_DFL);
    nap_ms(30000);
    return 0;
}
