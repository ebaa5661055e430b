/*
 * The parse floor: cJSON_ParseWithLength and cJSON_Delete on every line of
 * the given feeds (files or run directories), default allocator, one thread,
 * nothing else. What no JSON-reading ingest on cJSON can beat by much.
 * Prints: lines bytes seconds
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int parse_file(const char *path, unsigned long long *lines, unsigned long long *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        *bytes += (unsigned long long)n;
        if (line[n - 1] == '\n')
            n--;
        if (n == 0)
            continue;
        cJSON *j = cJSON_ParseWithLength(line, (size_t)n);
        if (!j) {
            fprintf(stderr, "%s: unparsable line\n", path);
            return -1;
        }
        cJSON_Delete(j);
        (*lines)++;
    }
    free(line);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long lines = 0, bytes = 0;
    double t0 = now();
    for (int i = 1; i < argc; i++) {
        struct stat st;
        char path[4096];
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            const char *names[] = {"misses.jsonl", "dispatches.jsonl"};
            for (int k = 0; k < 2; k++) {
                snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
                if (stat(path, &st) == 0 && parse_file(path, &lines, &bytes) != 0)
                    return 1;
            }
        } else if (parse_file(argv[i], &lines, &bytes) != 0) {
            return 1;
        }
    }
    printf("%llu %llu %.6f\n", lines, bytes, now() - t0);
    return 0;
}
