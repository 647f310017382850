/*
 * pty.h - pseudo-terminals for commands that behave differently on a
 * terminal (colours, progress bars, prompts, REPLs): opening the master,
 * setting the line discipline and window size, naming the slave the child
 * opens as its controlling terminal.
 */
#ifndef SHX_PTY_H
#define SHX_PTY_H

#include <stddef.h>
#include <stdint.h>

#include "shx/buf.h"

#define SHX_PTY_DEFAULT_COLS 200
#define SHX_PTY_DEFAULT_ROWS 50

/*
 * Open a master (close-on-exec, non-blocking) and prepare its slave: no
 * echo (unless `echo`), no output post-processing (a "\n" stays "\n", so output reads the
 * same as from a pipe), canonical input with signals (so ^C and ^D work),
 * the given window size. The slave's path goes to slave_path, the local
 * flags it was given (c_lflag) to *lflag.
 * Returns the master descriptor, or -1 with a message in err.
 */
int shx_pty_open(uint16_t cols, uint16_t rows, int echo, char *slave_path, size_t cap,
                 unsigned long *lflag, shx_buf *err);

/* Give the terminal of `master` a new window size; the kernel sends
 * SIGWINCH to its foreground process group when the size changes. 0, or
 * -1 with errno. */
int shx_pty_resize(int master, uint16_t cols, uint16_t rows);

#endif
