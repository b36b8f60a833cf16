/* A Worker thread is no way out: Landlock and seccomp were applied before exec, so every thread
 * and child of the confined process inherits them. */
#include "harness.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct fx f;

static void setup(void)
{
    fx_setup(&f, NULL);
}

static void teardown(void)
{
    fx_teardown(&f);
}

TestSuite(worker, .init = setup, .fini = teardown, .timeout = 90);

/* Runs body inside a Worker that has the prelude's helpers; the main thread waits for it. */
#define IN_WORKER(body)                                                                            \
    "const {Worker}=require('worker_threads');"                                                    \
    "const w=new Worker(`const fs=require('fs'),cp=require('child_process'),net=require('net');"   \
    "const E=process.env,WS=E.DSH_T_WS,OUT=E.DSH_T_OUT,SH=E.DSH_T_SHARED,SEC=E.DSH_T_SECRET;"      \
    "const show=(t,v)=>console.log(t+':OK'+(v===undefined?'':':'+v));"                             \
    "const fail=(t,e)=>console.log(t+':'+((e&&e.code)||(e&&e.message)||String(e)));"               \
    "const R=(t,f)=>{try{show(t,f())}catch(e){fail(t,e)}};"                                        \
    "const RA=async(t,f)=>{try{show(t,await f())}catch(e){fail(t,e)}};"                            \
    "(async()=>{" body "})()`,{eval:true});w.on('error',e=>console.log('WERR:'+e.message));"

Test(worker, writes_outside_the_workspace)
{
    hostile_case(&f, WW, "W",
                 IN_WORKER("R('W',()=>fs.writeFileSync(SH+'/victim.txt','pwned'));"
                           "R('W2',()=>fs.writeFileSync(OUT+'/from-worker','pwned'))"),
                 NULL, NULL);
}

Test(worker, reads_secrets)
{
    hostile_case(&f, WW, "R", IN_WORKER("R('R',()=>fs.readFileSync(SEC+'/.ssh/id_rsa','utf8'))"),
                 NULL, NULL);
}

Test(worker, connects_to_host_tcp)
{
    int port, fd = listen_tcp(&port);
    char env[64];
    snprintf(env, sizeof(env), "PORT=%d", port);
    const char *e[] = {env, NULL};
    hostile_case(&f, WW, "N",
                 IN_WORKER("await RA('N',()=>new Promise((res,rej)=>{const s=net.connect(+E.PORT,"
                           "'127.0.0.1');s.on('connect',()=>{s.destroy();res()});"
                           "s.on('error',rej)}))"),
                 e, NULL);
    close(fd);
}

Test(worker, spawns_a_child_that_ptraces)
{
    hostile_case(&f, WW, "S",
                 IN_WORKER("const r=cp.spawnSync(E.DSH_T_PROBE,['ptrace-child'],{encoding:'utf8'});"
                           "console.log('S:'+r.stdout.trim())"),
                 NULL, NULL);
}

Test(worker, spawns_a_shell_that_writes_outside)
{
    hostile_case(
        &f, WW, "W",
        IN_WORKER("const r=cp.spawnSync('/bin/sh',['-c','echo x > \"$0\"',SH+'/victim.txt'],"
                  "{encoding:'utf8'});console.log('W:'+(r.status===0?'OK':"
                  "(/Permission denied|Read-only/.test(r.stderr)?'EACCES':'FAIL')))"),
        NULL, NULL);
}

Test(worker, sees_no_host_environment)
{
    setenv("DSH_WORKER_SECRET_TOKEN", "dsh-host-secret-worker", 1);
    struct run r;
    fx_run(&f, WW, IN_WORKER("console.log('ENV:'+JSON.stringify(process.env))"), NULL, &r);
    cr_assert(tag_value(&r, "ENV"), "the worker ran");
    cr_assert(!strstr(r.out, "dsh-host-secret-worker"));
    run_free(&r);
}
