/* SPDX-License-Identifier: MIT */
/* bgrun-bench-floor: the contract's floor with systemd (issue #52), a bare
 * C prototype that does only what the contract asks of a job's start and
 * nothing of bgrun: its record written and synced (one fsync, as bgrund's
 * spec.json), one transient unit for it (a scope holding it, through
 * systemd's D-Bus API on the system bus), its command line run as Launch
 * runs one (`/bin/sh -c`), exec'd only once it is inside, and known to run
 * before the start counts as answered (Launch answers once the job runs,
 * or fails and nothing ran: an exec that failed after a success was told
 * would break that). A run's end counts once the scope's cgroup is seen
 * empty and a result is written and synced (the contract's "dead" only
 * once confirmed, and the crash model's fsync before an end is told). What
 * bgrun adds above it (bgrund between the caller and systemd, the
 * supervisor, the output) is what the benchmark rows set against it.
 *
 *   bgrun-bench-floor run N   N runs of `true` one after another, each
 *                             waited for to its end (what an agent's
 *                             `run` needs): prints the median in ms
 *   bgrun-bench-floor submit  one submission from the shell: a new process,
 *                             its connection, the record, the unit, the
 *                             command let go and seen exec'd; it exits
 *                             without waiting for its end
 *
 * Runs inside tools/sandbox (root, the private systemd); each unit is named
 * bgrun-floor-<pid>-<n>.scope and collected when its command ends. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

/* Beside bgrund's records: the same file system. */
#define FLOOR_DIR "/var/lib/bgrun/bgrun-bench-floor"

static sd_bus *bus;
static char job_path[256];
static char *job_result; /* the start job's result, once JobRemoved told it */

static void die(const char *what, int r) {
        fprintf(stderr, "bgrun-bench-floor: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

static uint64_t now_ns(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint32_t id;
        const char *path, *unit, *result;
        if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) >= 0 && strcmp(path, job_path) == 0)
                job_result = strdup(result);
        return 0;
}

/* size bytes written and synced into a new file of the job's directory. */
static void write_synced(const char *name, const char *file, size_t size) {
        char path[600], buf[2048];
        if (size > sizeof buf)
                die("a record's size", EINVAL);
        snprintf(path, sizeof path, FLOOR_DIR "/%s/%s", name, file);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0)
                die("open a record's file", errno);
        memset(buf, 'x', size);
        if (write(fd, buf, size) != (ssize_t) size || fsync(fd) < 0)
                die("write a record's file", errno);
        close(fd);
}

/* The record: a directory of its own, 2 KiB written and synced (about the
 * size of a job's spec.json), as bgrund's one fsync before it answers. */
static void write_record(const char *name) {
        char dir[512];
        snprintf(dir, sizeof dir, FLOOR_DIR "/%s", name);
        if (mkdir(dir, 0700) < 0)
                die("mkdir", errno);
        write_synced(name, "spec.json", 2048);
}

static void remove_record(const char *name) {
        char path[600];
        snprintf(path, sizeof path, FLOOR_DIR "/%s/spec.json", name);
        (void) unlink(path);
        snprintf(path, sizeof path, FLOOR_DIR "/%s/result.json", name);
        (void) unlink(path);
        snprintf(path, sizeof path, FLOOR_DIR "/%s", name);
        (void) rmdir(path);
}

/* The v2 hierarchy's files of pid's cgroup: "<root><path of /proc/PID/cgroup's 0:: line>". */
static void cgroup_dir_of(pid_t pid, char *ret, size_t size) {
        char file[64], line[512] = "";
        snprintf(file, sizeof file, "/proc/%d/cgroup", (int) pid);
        FILE *f = fopen(file, "re");
        if (!f)
                die("open /proc/PID/cgroup", errno);
        while (fgets(line, sizeof line, f) && strncmp(line, "0::", 3) != 0)
                ;
        fclose(f);
        if (strncmp(line, "0::", 3) != 0)
                die("the cgroup v2 path", ENOENT);
        line[strcspn(line, "\n")] = '\0';
        struct stat st;
        const char *root = stat("/sys/fs/cgroup/unified", &st) == 0 ? "/sys/fs/cgroup/unified" : "/sys/fs/cgroup";
        snprintf(ret, size, "%s%s", root, line + 3);
}

/* Its cgroup confirmed empty: "populated 0" in cgroup.events (or the
 * cgroup gone already, which systemd does once it is empty). */
static void confirm_empty(const char *cgroup_dir) {
        char file[700], buf[256];
        snprintf(file, sizeof file, "%s/cgroup.events", cgroup_dir);
        int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return;
                die("open cgroup.events", errno);
        }
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n < 0)
                die("read cgroup.events", errno);
        buf[n] = '\0';
        if (!strstr(buf, "populated 0"))
                die("the scope is not empty after its command's end", EBUSY);
}

/* One job: its record, a child held on a pipe, a scope holding it, its
 * start job waited for, then the child let go to exec `sh -c true`, and
 * seen exec'd (its end of a close-on-exec pipe closed). Returns the
 * child's pid; its cgroup's directory in cgroup_dir when that is not NULL. */
static pid_t start_one(const char *name, char *cgroup_dir, size_t size) {
        write_record(name);
        int go[2], ran[2];
        if (pipe2(go, O_CLOEXEC) < 0 || pipe2(ran, O_CLOEXEC) < 0)
                die("pipe", errno);
        pid_t pid = fork();
        if (pid < 0)
                die("fork", errno);
        if (pid == 0) {
                char c;
                close(go[1]);
                close(ran[0]);
                if (read(go[0], &c, 1) != 1)
                        _exit(1); /* never let go: runs nothing */
                int null = open("/dev/null", O_RDWR);
                if (null >= 0) {
                        dup2(null, 0);
                        dup2(null, 1);
                }
                execl("/bin/sh", "sh", "-c", "true", (char *) NULL);
                (void) !write(ran[1], "E", 1);
                _exit(127);
        }
        close(go[0]);
        close(ran[1]);

        char unit[300];
        snprintf(unit, sizeof unit, "%s.scope", name);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        free(job_result);
        job_result = NULL;
        int r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                   "org.freedesktop.systemd1.Manager", "StartTransientUnit", &e, &reply,
                                   "ssa(sv)a(sa(sv))", unit, "fail", 3, "Description", "s", "bgrun-bench floor",
                                   "CollectMode", "s", "inactive-or-failed", "PIDs", "au", 1, (uint32_t) pid, 0);
        if (r < 0) {
                fprintf(stderr, "bgrun-bench-floor: StartTransientUnit: %s\n", e.message ?: strerror(-r));
                exit(1);
        }
        const char *path;
        if (sd_bus_message_read(reply, "o", &path) < 0)
                die("StartTransientUnit's reply", EBADMSG);
        snprintf(job_path, sizeof job_path, "%s", path);
        sd_bus_message_unref(reply);
        while (!job_result) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        die("the bus", r);
                if (r == 0 && sd_bus_wait(bus, 10 * 1000000u) < 0)
                        die("the bus", errno);
        }
        if (strcmp(job_result, "done") != 0) {
                fprintf(stderr, "bgrun-bench-floor: the start job of %s: %s\n", unit, job_result);
                exit(1);
        }
        if (cgroup_dir)
                cgroup_dir_of(pid, cgroup_dir, size);
        /* Inside its scope: it may run. */
        if (write(go[1], "G", 1) != 1)
                die("let go", errno);
        close(go[1]);
        /* EOF once exec'd; a byte if the exec failed. */
        char c;
        ssize_t k = read(ran[0], &c, 1);
        close(ran[0]);
        if (k != 0)
                die("exec /bin/sh", k < 0 ? errno : ENOEXEC);
        return pid;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return x < y ? -1 : x > y;
}

int main(int argc, char *argv[]) {
        if (argc < 2 || (strcmp(argv[1], "run") != 0 && strcmp(argv[1], "submit") != 0)) {
                fprintf(stderr, "usage: bgrun-bench-floor run N | submit\n");
                return 2;
        }
        int r = sd_bus_open_system(&bus);
        if (r < 0)
                die("connect to the system bus", r);
        r = sd_bus_match_signal(bus, NULL, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed, NULL);
        if (r < 0)
                die("watch JobRemoved", r);
        r = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                               "org.freedesktop.systemd1.Manager", "Subscribe", NULL, NULL, "");
        if (r < 0)
                die("Subscribe", r);
        (void) mkdir(FLOOR_DIR, 0700);

        char name[64];
        if (strcmp(argv[1], "submit") == 0) {
                /* The record stays until the loop's end removes the directory. */
                snprintf(name, sizeof name, "bgrun-floor-%d-0", (int) getpid());
                (void) start_one(name, NULL, 0);
                sd_bus_flush_close_unref(bus);
                return 0;
        }

        int n = argc > 2 ? atoi(argv[2]) : 0;
        if (n <= 0)
                die("N", EINVAL);
        double *ms = calloc((size_t) n, sizeof(double));
        if (!ms)
                die("memory", ENOMEM);
        for (int i = 0; i < n; i++) {
                snprintf(name, sizeof name, "bgrun-floor-%d-%d", (int) getpid(), i);
                char cgroup_dir[600];
                uint64_t t0 = now_ns();
                pid_t pid = start_one(name, cgroup_dir, sizeof cgroup_dir);
                int status;
                if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        die("sh -c true did not exit 0", ECHILD);
                confirm_empty(cgroup_dir);
                /* The result, as a supervisor's result.json: synced before the end counts. */
                write_synced(name, "result.json", 384);
                ms[i] = (double) (now_ns() - t0) / 1e6;
                remove_record(name);
                usleep(2000); /* its scope collected, untimed */
        }
        qsort(ms, (size_t) n, sizeof(double), cmp_double);
        printf("%.2f\n", ms[n / 2]);
        free(ms);
        sd_bus_flush_close_unref(bus);
        return 0;
}
