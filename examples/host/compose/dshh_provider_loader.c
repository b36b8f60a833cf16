/* dlopen()s a provider shared object and checks the table it exports. */
#include "dshh_provider_loader.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

/* The last field this host calls: a shorter table comes from a provider older than 1.0. */
#define MIN_TABLE_SIZE (offsetof(struct dsh_provider, wait) + sizeof(((struct dsh_provider *)0)->wait))

int dshh__provider_open(const char *path, const char *row_name, void **ret_dl,
                        const struct dsh_provider **ret_provider, FILE *err)
{
    /* RTLD_LOCAL: the provider's own json-c/libyaml symbols must not interpose ours. */
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        fprintf(err, "dsh: cannot load provider %s: %s\n", path, dlerror());
        return -1;
    }
    dsh_provider_entry_fn entry;
    /* dlsym returns void *; the union-free cast below is the POSIX-sanctioned idiom. */
    *(void **)&entry = dlsym(dl, "dsh_provider_entry");
    if (!entry) {
        fprintf(err, "dsh: %s exports no dsh_provider_entry\n", path);
        dlclose(dl);
        return -1;
    }
    const struct dsh_provider *p = entry(DSH_ABI_MAJOR);
    if (!p) {
        fprintf(err, "dsh: %s does not support host ABI %d\n", path, DSH_ABI_MAJOR);
        dlclose(dl);
        return -1;
    }
    if (p->abi_major != DSH_ABI_MAJOR || p->struct_size < MIN_TABLE_SIZE) {
        fprintf(err, "dsh: %s: %s (provider ABI %u.%u, table %u bytes; host ABI %d.%d)\n", path,
                dsh_strerror(DSH_E_ABI_MISMATCH), p->abi_major, p->abi_minor, p->struct_size,
                DSH_ABI_MAJOR, DSH_ABI_MINOR);
        dlclose(dl);
        return -1;
    }
    if (row_name && (!p->name || strcmp(p->name, row_name) != 0)) {
        fprintf(err, "dsh: %s is provider '%s', but the row names '%s'\n", path,
                p->name ? p->name : "(null)", row_name);
        dlclose(dl);
        return -1;
    }
    *ret_dl = dl;
    *ret_provider = p;
    return 0;
}
