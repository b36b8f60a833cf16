/* Watching a file that a looping process appends to: the freeze tests' measure of whether anything
 * of a range still runs. */
#ifndef TEST_FILE_GROWTH_H
#define TEST_FILE_GROWTH_H

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* The file's size, 0 while it does not exist. */
static inline off_t file_size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : 0;
}

/* Returns once the file is larger than beyond (the test's timeout bounds the wait). */
static inline void file_wait_growth(const char *path, off_t beyond)
{
    while (file_size_of(path) <= beyond)
        usleep(1000);
}

#endif
