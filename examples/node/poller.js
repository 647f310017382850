// poller.js - the one helper thread of the shexec binding: it waits for the
// descriptors of every open session with poll(2), and nothing else.
//
// The main thread sends {fds, n, timeout, seq}: an array of struct pollfd whose
// first entry is the binding's wake pipe, then the entries each session
// asked for (shexec_session_pollfds). This thread blocks in poll() until one
// is ready, the timeout passes, or the main thread writes a byte to the wake
// pipe (the set changed: a command started, input was queued, the process
// is exiting). It drains the wake pipe and sends the entries back, revents
// filled, with the same seq. The main thread then hands them to
// shexec_session_process() (unless a library call since the listing may have
// changed a session's descriptors: then it drops them and lists anew),
// which reads the output and runs the library's callbacks there: this
// thread never calls the library, so a session is only ever used by the
// main thread, and no callback ever runs anywhere else.
'use strict';

const { parentPort, workerData } = require('node:worker_threads');
const koffi = require('koffi');

const libc = koffi.load(workerData.libc);
const poll = libc.func('int poll(_Inout_ void *fds, unsigned long nfds, int timeout)');
const read = libc.func('long read(int fd, _Out_ void *buf, size_t count)');

const drain = Buffer.alloc(64);

parentPort.on('message', ({ fds, n, timeout, seq }) => {
  const buf = Buffer.from(fds.buffer, fds.byteOffset, fds.byteLength);
  let got = poll(buf, n, timeout);
  const errno = got < 0 ? koffi.errno() : 0;
  if (buf.readInt16LE(6) !== 0) {
    // the wake pipe is non-blocking: read until it is empty
    while (read(workerData.wakeFd, drain, drain.length) > 0);
  }
  if (got < 0) got = 0; // EINTR: the main thread processes (deadlines) and asks again
  parentPort.postMessage({ fds: buf, got, errno, seq }, [buf.buffer]);
});
