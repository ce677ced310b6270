/*
 * Steps the wall clock of the process it is preloaded into (LD_PRELOAD), so
 * the conformance suite can step a real redis-server's clock: every reading
 * of CLOCK_REALTIME, gettimeofday() and time() is moved by the milliseconds
 * written in the file LOCKLAB_CLOCK_OFFSET_FILE names (read at each call; no
 * file or no number is no offset). The monotonic clock is left alone, as a
 * stepped wall clock leaves it.
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

static long long offset_ms(void) {
    const char *path = getenv("LOCKLAB_CLOCK_OFFSET_FILE");
    if (path == NULL) return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[32];
    ssize_t length = read(fd, text, sizeof text - 1);
    close(fd);
    if (length <= 0) return 0;
    text[length] = '\0';
    return strtoll(text, NULL, 10);
}

static void shift(struct timespec *time) {
    long long nanoseconds = (long long)time->tv_nsec + offset_ms() % 1000 * 1000000LL;
    time->tv_sec += offset_ms() / 1000 + nanoseconds / 1000000000LL;
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
