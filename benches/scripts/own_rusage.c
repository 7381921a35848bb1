/* own_rusage FD CMD [ARG...]: runs CMD as a fresh child of this small process and writes
 * "wall_us cpu_us maxrss_kib status" of that child alone to descriptor FD.
 *
 * Why not from Python: a process forked (or vforked) by Python and exec'ing mypi keeps,
 * in its peak RSS, the pages it shared with Python before the exec (Linux carries an exec'd
 * image's high-water mark over to the new program), so ru_maxrss reports ~14 MiB whatever
 * mypi uses. A child forked from this launcher starts from the launcher's few hundred KiB. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: own_rusage FD CMD [ARG...]\n");
    return 2;
  }
  int fd = atoi(argv[1]);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd);
    execvp(argv[2], argv + 2);
    _exit(127);
  }
  int status;
  struct rusage ru;
  if (pid < 0 || wait4(pid, &status, 0, &ru) < 0) {
    return 2;
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  long wall = (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
  long cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000L + ru.ru_utime.tv_usec
             + ru.ru_stime.tv_usec;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  dprintf(fd, "%ld %ld %ld %d\n", wall, cpu, ru.ru_maxrss, code);
  return 0;
}
