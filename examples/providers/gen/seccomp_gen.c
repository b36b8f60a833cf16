/* Build-time generator: writes the launcher's seccomp programs (seccomp_rules.c, built with
 * libseccomp) as a C header of BPF instructions, so the launcher loads them with seccomp(2)
 * without building them at every run.
 *
 *   dsh-seccomp-gen OUTPUT.h
 *
 * The table is reviewed for x86_64 only: on any other architecture the header holds no program
 * and the launcher fails closed. */
#include "seccomp_rules.h"

#include <linux/filter.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const filter_names[] = {
#define FILTER_NAME(name) #name,
    DSHX_SECCOMP_FILTER_TABLE(FILTER_NAME)
#undef FILTER_NAME
};

/* The program of one filter, read back from a temporary file (libseccomp exports to an fd). */
static struct sock_filter *program(enum dshx_seccomp_filter filter, size_t *ret_len)
{
    char err[256] = "";
    FILE *tmp = tmpfile();
    if (!tmp || dshx__seccomp_rules_export(filter, fileno(tmp), err, sizeof(err)) < 0) {
        fprintf(stderr, "dsh-seccomp-gen: %s: %s\n", filter_names[filter], tmp ? err : "tmpfile");
        exit(1);
    }
    long size = lseek(fileno(tmp), 0, SEEK_END);
    struct sock_filter *insns = size > 0 ? malloc((size_t)size) : NULL;
    if (!insns || size % (long)sizeof(*insns) || pread(fileno(tmp), insns, (size_t)size, 0) != size) {
        fprintf(stderr, "dsh-seccomp-gen: %s: cannot read the exported program\n", filter_names[filter]);
        exit(1);
    }
    fclose(tmp);
    *ret_len = (size_t)size / sizeof(*insns);
    return insns;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: dsh-seccomp-gen OUTPUT.h\n");
        return 2;
    }
    FILE *out = fopen(argv[1], "w");
    if (!out) {
        perror(argv[1]);
        return 1;
    }
    fprintf(out, "/* Generated at build time by seccomp_gen.c from seccomp_rules.c and syscall_allow.h: "
                 "do not edit. */\n#include <linux/filter.h>\n\n");
#if defined(__x86_64__)
    for (int f = 0; f < DSHX_SECCOMP_FILTER_COUNT; f++) {
        size_t n;
        struct sock_filter *insns = program((enum dshx_seccomp_filter)f, &n);
        fprintf(out, "static const struct sock_filter dshx__seccomp_program_%s[] = {\n", filter_names[f]);
        for (size_t i = 0; i < n; i++)
            fprintf(out, "    {0x%04x, %u, %u, 0x%08x},\n", insns[i].code, insns[i].jt, insns[i].jf,
                    insns[i].k);
        fprintf(out, "};\n\n");
        free(insns);
    }
    /* Each set in load order: the closed one, then the network allow-list's. */
    static const char *const sets[] = {"dshx__seccomp_programs", "dshx__seccomp_programs_inet"};
    for (int set = 0; set < 2; set++) {
        fprintf(out, "static const struct sock_fprog %s[] = {\n", sets[set]);
        for (int f = set * DSHX_SECCOMP_SET_SIZE; f < (set + 1) * DSHX_SECCOMP_SET_SIZE; f++)
            fprintf(out,
                    "    {sizeof(dshx__seccomp_program_%s) / sizeof(struct sock_filter), "
                    "(struct sock_filter *)dshx__seccomp_program_%s},\n",
                    filter_names[f], filter_names[f]);
        fprintf(out, "};\n");
    }
    fprintf(out, "#define DSHX_SECCOMP_PROGRAM_COUNT %d\n", DSHX_SECCOMP_SET_SIZE);
#else
    fprintf(out, "#define DSHX_SECCOMP_PROGRAM_COUNT 0 /* no reviewed syscall table here */\n");
#endif
    if (fclose(out) != 0) {
        perror(argv[1]);
        return 1;
    }
    return 0;
}
