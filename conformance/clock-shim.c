/*
 * Steps and skews the wall clock of the process it is preloaded into
 * (LD_PRELOAD), so that the conformance suite and live mode can move a real
 * redis-server's clock: every reading of CLOCK_REALTIME, gettimeofday() and
 * time() is moved as the file LOCKLAB_CLOCK_OFFSET_FILE says (read at each
 * call). The file holds "OFFSET_MS [DRIFT_PPM ANCHOR_UNIX_MS]": the clock
 * reads OFFSET_MS ahead, plus DRIFT_PPM parts per million of the real time
 * elapsed since ANCHOR_UNIX_MS. No file, or no number, is no change. The
 * monotonic clock is left alone, as a stepped wall clock leaves it.
 *
 * Debian's libfaketime does the same job but does not start Debian's
 * redis-server: jemalloc reads the clock while it starts, libfaketime
 * allocates while it starts, and the two recurse. This shim never
 * allocates: it asks the kernel for the time with the raw system call and
 * reads the offset with open() and read().
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* The file's numbers: the offset in ms, the drift in ppm, the drift's anchor in unix ms. */
static void read_change(long long *offset_ms, long long *drift_ppm, long long *anchor_ms) {
    *offset_ms = 0;
    *drift_ppm = 0;
    *anchor_ms = 0;
    const char *path = getenv("LOCKLAB_CLOCK_OFFSET_FILE");
    if (path == NULL) return;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char text[96];
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0) return;
    text[length] = '\0';
    char *rest = text;
    *offset_ms = strtoll(rest, &rest, 10);
    *drift_ppm = strtoll(rest, &rest, 10);
    *anchor_ms = strtoll(rest, &rest, 10);
}

static void shift(struct timespec *time) {
    long long offset_ms, drift_ppm, anchor_ms;
    read_change(&offset_ms, &drift_ppm, &anchor_ms);
    long long real_us = (long long)time->tv_sec * 1000000LL + time->tv_nsec / 1000;
    /* Microseconds keep the product in range: hours of elapsed time times 500,000 ppm. */
    long long drift_us = drift_ppm == 0 ? 0 : (real_us - anchor_ms * 1000LL) * drift_ppm / 1000000LL;
    long long nanoseconds = (long long)time->tv_nsec + (offset_ms % 1000) * 1000000LL + (drift_us % 1000000LL) * 1000LL;
    time->tv_sec += offset_ms / 1000 + drift_us / 1000000LL + nanoseconds / 1000000000LL;
    nanoseconds %= 1000000000LL;
    if (nanoseconds < 0) {
        nanoseconds += 1000000000LL;
        time->tv_sec -= 1;
    }
    time->tv_nsec = nanoseconds;
}

int clock_gettime(clockid_t clock, struct timespec *time) {
    int result = (int)syscall(SYS_clock_gettime, clock, time);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) shift(time);
    return result;
}

int gettimeofday(struct timeval *restrict value, void *restrict zone) {
    (void)zone;
    struct timespec now;
    int result = clock_gettime(CLOCK_REALTIME, &now);
    if (result == 0) {
        value->tv_sec = now.tv_sec;
        value->tv_usec = now.tv_nsec / 1000;
    }
    return result;
}

time_t time(time_t *out) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (out != NULL) *out = now.tv_sec;
    return now.tv_sec;
}
