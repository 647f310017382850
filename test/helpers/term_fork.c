/*
 * term_fork - fork a child as a SIGTERM comes, the way bash with an EXIT
 * trap does: SIGTERM is blocked while it forks, so the child starts without
 * the signal and runs on. Run as the command's shell (`exec term_fork ...`)
 * it prints "ready", takes the SIGTERM sent to its group, forks at once a
 * child that sets SIGTERM back to its default and execs PROGRAM ARGS, prints
 * "child PID", and then, as MODE says, waits for the child ("wait": bash
 * waiting for its foreground command) or exits ("exit": bash running its
 * EXIT trap and dying at once, the child left to init).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "wait") != 0 && strcmp(argv[1], "exit") != 0)) {
        fprintf(stderr, "usage: term_fork wait|exit PROGRAM [ARG...]\n");
        return 2;
    }
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    if (sigprocmask(SIG_BLOCK, &term, NULL) != 0) {
        perror("term_fork: sigprocmask");
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    int sig = 0;
    if (sigwait(&term, &sig) != 0) {
        perror("term_fork: sigwait");
        return 1;
    }
    pid_t child = fork();
    if (child < 0) {
        perror("term_fork: fork");
        return 1;
    }
    if (child == 0) {
        signal(SIGTERM, SIG_DFL);
        sigprocmask(SIG_UNBLOCK, &term, NULL);
        execvp(argv[2], argv + 2);
        _exit(127);
    }
    printf("child %d\n", (int)child);
    fflush(stdout);
    if (strcmp(argv[1], "exit") == 0)
        return 0;
    int status;
    while (waitpid(child, &status, 0) < 0)
        ;
    return 0;
}
