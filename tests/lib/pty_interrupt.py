#!/usr/bin/env python3
"""Run a command on a fresh pseudo-terminal, wait for its "Ctrl-C" banner,
type Ctrl-C (the terminal's interrupt character, so the line discipline
sends SIGINT and echoes ^C as a real terminal does), and print everything
the terminal showed. Exit status: the command's; 124 when the banner did
not come within the time limit.

usage: pty_interrupt.py TIMEOUT_S CMD [ARG...]
"""
import os
import pty
import select
import sys
import time


def read_until(fd, buf, deadline, stop):
    while not stop(buf) and time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the command closed the terminal
            return buf, True
        if not data:
            return buf, True
        buf += data
    return buf, False


def main():
    deadline = time.time() + float(sys.argv[1])
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[2], sys.argv[2:])
    buf, ended = read_until(fd, b"", deadline, lambda b: b"Ctrl-C" in b)
    if b"Ctrl-C" not in buf:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        sys.stdout.write(buf.decode(errors="replace"))
        sys.exit(124)
    os.write(fd, b"\x03")
    buf, _ = read_until(fd, buf, deadline, lambda b: False)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(buf.decode(errors="replace"))
    sys.exit(os.waitstatus_to_exitcode(status))


main()
