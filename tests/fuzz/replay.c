/*
 * Runs a fuzz target over saved inputs (the seed corpus and every crasher
 * ever found) without libFuzzer, so they stay regression tests in ctest.
 * Usage: replay FILE_OR_DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0)
        if ((n += got) == cap)
            buf = realloc(buf, cap *= 2);
    fclose(f);
    if (!buf)
        return 1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int run_path(const char *path, int *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
        (*count)++;
        return run_file(path);
    }
    DIR *d = opendir(path);
    struct dirent *e;
    int failed = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        failed |= run_path(sub, count);
    }
    if (d)
        closedir(d);
    return failed;
}

int main(int argc, char **argv)
{
    int count = 0, failed = 0;
    for (int i = 1; i < argc; i++)
        failed |= run_path(argv[i], &count);
    printf("replayed %d inputs: %d passed, %d failed\n", count, failed ? 0 : count, failed ? 1 : 0);
    return failed;
}
