/* The raw signers on several threads at once, each with its own output
   buffer, to tell TokenMint's scaling apart from the C library's own. */
#include "CBenchRaw.h"
#include <pthread.h>

struct job {
    int op;
    void *key;
    const char *md;
    int padding;
    const uint8_t *m;
    size_t n;
    const uint8_t *secret;
    size_t secret_len;
    size_t iterations;
    int failures;
};

static void *run_job(void *arg) {
    struct job *job = arg;
    uint8_t out[1024];
    for (size_t i = 0; i < job->iterations; i++) {
        int ok;
        size_t len = sizeof out;
        switch (job->op) {
        case 0: ok = CBenchRaw_ed25519_sign(out, job->m, job->n, job->secret) == 0; break;
        case 1: ok = CBenchRaw_sign(job->key, job->md, job->padding, job->m, job->n, out, &len) == 0; break;
        default: ok = CBenchRaw_hmac_sha256(job->secret, job->secret_len, job->m, job->n, out) == 0; break;
        }
        if (!ok) job->failures++;
    }
    return NULL;
}

double CBenchRaw_parallel_sign(int op, void *key, const char *md, int padding, const uint8_t *m, size_t n,
                               const uint8_t *secret, size_t secret_len, size_t iterations, int threads) {
    if (threads < 1 || threads > 16) return -1;
    pthread_t ids[16];
    struct job jobs[16];
    uint64_t start = CBenchRaw_now();
    for (int t = 0; t < threads; t++) {
        jobs[t] = (struct job){op, key, md, padding, m, n, secret, secret_len, iterations, 0};
        if (pthread_create(&ids[t], NULL, run_job, &jobs[t]) != 0) return -1;
    }
    int failures = 0;
    for (int t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        failures += jobs[t].failures;
    }
    if (failures) return -1;
    return (double)(CBenchRaw_now() - start) / 1e9;
}
