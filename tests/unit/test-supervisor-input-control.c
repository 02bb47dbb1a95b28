/* SPDX-License-Identifier: MIT */
/* The supervisor's side of a job's input: the control socket's protocol
 * (supervisor-protocol.h) as bgrund speaks it, on a pipe and a terminal,
 * and the disk budget's messages. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <termios.h>

#include "input-control.h"
#include "macro.h"
#include "supervisor-protocol.h"

static char dir[] = "/tmp/bgrun-test-input-XXXXXX";
static int dir_fd = -EBADF;

static void setup(void) {
        cr_assert_not_null(mkdtemp(dir));
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dir_fd, 0);
}

static void teardown(void) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        (void) !system(cmd);
        safe_close(dir_fd);
}

static JobSpec spec_with(JobStdin mode) {
        return (JobSpec) { .id = "abc0123456", .stdin_mode = mode, .uid = getuid(), .tty_rows = 24, .tty_columns = 80 };
}

/* One turn of the supervisor's loop, as supervise.c runs it. */
static void turn(InputControl *ic) {
        struct pollfd p[INPUT_CONTROL_POLLS];
        input_control_poll(ic, p);
        (void) poll(p, INPUT_CONTROL_POLLS, 100);
        input_control_dispatch(ic, p);
}

/* Connect as bgrund does; the greeting's byte, and its fd if any. */
static int connect_control(InputControl *ic, char *ret_greeting, int *ret_fd) {
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s/%s", dir, SUPERVISOR_CONTROL_SOCKET);
        cr_assert_eq(connect(fd, (struct sockaddr *) &sa, sizeof sa), 0, "connect: %m");
        turn(ic);
        char c = 0;
        struct iovec iov = { .iov_base = &c, .iov_len = 1 };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } control = {};
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control.buf };
        cr_assert_eq(recvmsg(fd, &mh, MSG_CMSG_CLOEXEC), 1);
        *ret_greeting = c;
        *ret_fd = -EBADF;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_type == SCM_RIGHTS)
                memcpy(ret_fd, CMSG_DATA(cm), sizeof(int));
        return fd;
}

/* A job without input has the socket too, for its disk budget: no input
 * is said, then what the output keeps; bgrund's limit comes through. */
Test(input_control, no_input_but_the_disk_budget, .init = setup, .fini = teardown) {
        InputControl ic = INPUT_CONTROL_NULL;
        const char *step;
        JobSpec s = spec_with(JOB_STDIN_NULL);
        cr_assert_eq(input_control_open(&ic, dir_fd, &s, -EBADF, &step), 0);
        cr_assert_lt(input_control_child_stdin(&ic), 0, "/dev/null");
        char g;
        int input_fd;
        int conn = connect_control(&ic, &g, &input_fd);
        cr_assert_eq(g, CONTROL_NO_INPUT);
        cr_assert_lt(input_fd, 0);
        cr_assert(ic.disk_report_due, "a new connection wants to hear what the output keeps");

        input_control_send_disk_used(&ic, 12345);
        char buf[16];
        cr_assert_eq(recv(conn, buf, sizeof buf, 0), (ssize_t) CONTROL_DISK_MESSAGE_SIZE);
        uint64_t used;
        memcpy(&used, buf + 1, sizeof used);
        cr_assert_eq(buf[0], CONTROL_DISK_USED);
        cr_assert_eq(used, 12345);

        char l[CONTROL_DISK_MESSAGE_SIZE] = { CONTROL_DISK_LIMIT };
        uint64_t limit = 7 << 20;
        memcpy(l + 1, &limit, sizeof limit);
        cr_assert_eq(send(conn, l, sizeof l, 0), (ssize_t) sizeof l);
        turn(&ic);
        cr_assert(ic.disk_limit_new);
        cr_assert_eq(ic.disk_limit, limit);
        /* A message of the wrong size is no limit. */
        ic.disk_limit_new = false;
        cr_assert_eq(send(conn, l, sizeof l - 1, 0), (ssize_t) sizeof l - 1);
        turn(&ic);
        cr_assert(!ic.disk_limit_new);
        close(conn);
        input_control_done(&ic);
}

Test(input_control, pipe_handed_over_closed_and_refused_after, .init = setup, .fini = teardown) {
        InputControl ic = INPUT_CONTROL_NULL;
        const char *step;
        JobSpec s = spec_with(JOB_STDIN_PIPE);
        cr_assert_eq(input_control_open(&ic, dir_fd, &s, -EBADF, &step), 0);
        struct stat st;
        cr_assert_eq(fstatat(dir_fd, SUPERVISOR_CONTROL_SOCKET, &st, 0), 0);
        cr_assert(S_ISSOCK(st.st_mode));
        cr_assert_eq(st.st_mode & 0777, 0600, "socket mode %o", st.st_mode & 0777);
        int job_stdin = dup(input_control_child_stdin(&ic));
        input_control_forked(&ic);

        char g;
        int input_fd;
        int conn = connect_control(&ic, &g, &input_fd);
        cr_assert_eq(g, CONTROL_INPUT);
        cr_assert_geq(input_fd, 0, "the pipe's write end came along");
        cr_assert(fcntl(input_fd, F_GETFL) & O_NONBLOCK, "bgrund's end never blocks");
        cr_assert_eq(write(input_fd, "hello\n", 6), 6);
        char buf[16] = {};
        cr_assert_eq(read(job_stdin, buf, sizeof buf), 6);
        cr_assert_str_eq(buf, "hello\n");

        /* Close: bgrund's end, then the supervisor's; the job reads EOF. */
        close(input_fd);
        char c = CONTROL_CLOSE;
        cr_assert_eq(send(conn, &c, 1, 0), 1);
        turn(&ic);
        cr_assert_eq(read(job_stdin, buf, sizeof buf), 0, "EOF once both ends are closed");

        /* A restarted bgrund learns there is no input any more. */
        close(conn);
        conn = connect_control(&ic, &g, &input_fd);
        cr_assert_eq(g, CONTROL_NO_INPUT);
        cr_assert_lt(input_fd, 0);
        close(conn);

        input_control_stop_listening(&ic);
        cr_assert_eq(faccessat(dir_fd, SUPERVISOR_CONTROL_SOCKET, F_OK, 0), -1, "unlinked once the job ends");
        close(job_stdin);
        input_control_done(&ic);
}

Test(input_control, terminal_relays_input_output_size_and_eof, .init = setup, .fini = teardown) {
        int out[2];
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        InputControl ic = INPUT_CONTROL_NULL;
        const char *step;
        JobSpec s = spec_with(JOB_STDIN_TTY);
        s.tty_rows = 33;
        s.tty_columns = 101;
        int r = input_control_open(&ic, dir_fd, &s, out[1], &step);
        if (r == -ENOENT || r == -ENXIO)
                cr_skip_test("no pseudo-terminals here (%s)", step);
        cr_assert_eq(r, 0, "%s: %s", step, strerror(-r));
        close(out[1]);
        int slave = dup(input_control_child_tty(&ic));
        cr_assert(isatty(slave));
        struct winsize ws;
        cr_assert_eq(ioctl(slave, TIOCGWINSZ, &ws), 0);
        cr_assert_eq(ws.ws_row, 33);
        cr_assert_eq(ws.ws_col, 101);
        input_control_forked(&ic);
        /* Raw, so the bytes cross as they are: no echo, no line editing. */
        struct termios t;
        cr_assert_eq(tcgetattr(slave, &t), 0);
        cfmakeraw(&t);
        cr_assert_eq(tcsetattr(slave, TCSANOW, &t), 0);

        char g;
        int input_fd;
        int conn = connect_control(&ic, &g, &input_fd);
        cr_assert_eq(g, CONTROL_INPUT);
        cr_assert_eq(write(input_fd, "abc", 3), 3);
        for (int i = 0; i < 5; i++)
                turn(&ic);
        char buf[64] = {};
        cr_assert_eq(read(slave, buf, sizeof buf), 3);
        cr_assert_str_eq(buf, "abc");

        /* What the job writes to its terminal reaches the output pipe. */
        cr_assert_eq(write(slave, "shown", 5), 5);
        for (int i = 0; i < 5; i++)
                turn(&ic);
        memset(buf, 0, sizeof buf);
        cr_assert_eq(read(out[0], buf, sizeof buf), 5);
        cr_assert_str_eq(buf, "shown");

        char resize[1 + 2 * sizeof(uint16_t)] = { CONTROL_RESIZE };
        uint16_t size[2] = { 50, 200 };
        memcpy(resize + 1, size, sizeof size);
        cr_assert_eq(send(conn, resize, sizeof resize, 0), (ssize_t) sizeof resize);
        turn(&ic);
        cr_assert_eq(ioctl(slave, TIOCGWINSZ, &ws), 0);
        cr_assert_eq(ws.ws_row, 50);
        cr_assert_eq(ws.ws_col, 200);

        /* Close: the terminal gets its EOF character once. */
        close(input_fd);
        char c = CONTROL_CLOSE;
        cr_assert_eq(send(conn, &c, 1, 0), 1);
        for (int i = 0; i < 5; i++)
                turn(&ic);
        memset(buf, 0, sizeof buf);
        cr_assert_eq(read(slave, buf, sizeof buf), 1);
        cr_assert_eq(buf[0], t.c_cc[VEOF]);

        /* The job's end: what it showed last, then EOF on the output. */
        cr_assert_eq(write(slave, "bye", 3), 3);
        close(slave);
        cr_assert(input_control_drain_output(&ic));
        memset(buf, 0, sizeof buf);
        cr_assert_eq(read(out[0], buf, sizeof buf), 3);
        cr_assert_str_eq(buf, "bye");
        cr_assert_eq(read(out[0], buf, sizeof buf), 0, "EOF");
        close(conn);
        close(out[0]);
        input_control_done(&ic);
}
