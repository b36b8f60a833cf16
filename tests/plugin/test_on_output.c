/* on_output (ABI 1.1) through the real plugin core and the reference services: entries arrive in
 * order before on_done and add up to the result's output; a 1.0 host, whose callbacks struct ends
 * before on_output, is never called there (the bytes after its struct are not read); a struct
 * smaller than 1.0's is rejected. */
#include "loaded_provider.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fixture {
    struct loaded_provider lp;
    const struct dsh_provider *p;
    struct dsh_instance *inst;
    char streamed[4096];
    size_t n_entries;
    bool output_after_done;
};

static void load(struct fixture *f)
{
    loaded_provider_open(&f->lp, "");
    f->p = f->lp.p;
    f->inst = f->lp.inst;
}

static void on_output(void *ud, dsh_run_id run, const char *json, size_t len)
{
    (void)run;
    struct fixture *f = ud;
    f->output_after_done |= f->lp.result != NULL;
    size_t used = strlen(f->streamed);
    snprintf(f->streamed + used, sizeof f->streamed - used, "%.*s|", (int)len, json);
    f->n_entries++;
}

/* A host's callbacks struct of struct_size bytes followed by bytes it does not own. */
struct host_callbacks {
    struct dsh_run_callbacks cb;
    char trailing[16];
};

static int start(struct fixture *f, const char *program, struct host_callbacks *hc)
{
    char request[512], *spec = NULL;
    size_t spec_len;
    struct dsh_error err = {0};
    snprintf(request, sizeof request, "{\"program\":\"%s\"}", program);
    cr_assert_eq(f->p->resolve(f->inst, request, strlen(request), &spec, &spec_len, &err), 0, "%s", err.message);
    dsh_run_id id;
    int rc = f->p->run(f->inst, spec, spec_len, &hc->cb, &id, &err);
    f->p->free_text(spec);
    while (rc == 0 && !f->lp.result)
        cr_assert_geq(f->p->wait(f->inst, 1000), 0);
    return rc;
}

Test(on_output, entries_in_order_before_on_done_and_the_result_is_unchanged)
{
    struct fixture f = {0};
    load(&f);
    struct host_callbacks hc = {.cb = {.struct_size = sizeof hc.cb, .on_call = loaded_provider_ignore_call, .on_done = loaded_provider_keep_result,
                                       .userdata = &f, .on_output = on_output}};
    cr_assert_eq(start(&f, "inspect('one'); await new Promise((r) => setTimeout(r, 50)); inspect('two')", &hc), 0);
    cr_expect_str_eq(f.streamed, "{\"type\":\"text\",\"text\":\"one\\n\"}|{\"type\":\"text\",\"text\":\"two\\n\"}|");
    cr_expect(!f.output_after_done);
    cr_expect(strstr(f.lp.result, "\"output\":[{\"type\":\"text\",\"text\":\"one\\ntwo\\n\"}]") != NULL, "%s", f.lp.result);
    loaded_provider_close(&f.lp);
}

Test(on_output, a_1_0_host_struct_is_read_only_up_to_its_size)
{
    struct fixture f = {0};
    load(&f);
    struct host_callbacks hc = {.cb = {.struct_size = offsetof(struct dsh_run_callbacks, on_output),
                                       .on_call = loaded_provider_ignore_call, .on_done = loaded_provider_keep_result, .userdata = &f}};
    /* Control: were the provider to read past struct_size, it would call this. */
    hc.cb.on_output = on_output;
    cr_assert_eq(start(&f, "inspect('one')", &hc), 0);
    cr_expect_eq(f.n_entries, 0);
    cr_expect(strstr(f.lp.result, "\"text\":\"one\\n\"") != NULL, "%s", f.lp.result);
    loaded_provider_close(&f.lp);
}

Test(on_output, a_struct_smaller_than_1_0_is_rejected)
{
    struct fixture f = {0};
    load(&f);
    struct host_callbacks hc = {.cb = {.struct_size = offsetof(struct dsh_run_callbacks, userdata),
                                       .on_call = loaded_provider_ignore_call, .on_done = loaded_provider_keep_result, .userdata = &f}};
    cr_expect_eq(start(&f, "1", &hc), -EINVAL);
    loaded_provider_close(&f.lp);
}
